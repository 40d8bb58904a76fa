// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: the device node, open(), the ioctls, mmap() geometry, the
 * limits (module parameters, RLIMIT_MEMLOCK) and the sysfs counters.
 */
/*
 * 6.1's kselftest_harness.h leaves parameters unused in code it expands
 * (TEST() wrappers, its SIGALRM handler); -Wextra would flag them here.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"

#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <termios.h>
#include <linux/capability.h>

#include "secarena_helpers.h"

#define PS	page_size()

static const char * const sysfs_counter_names[] = {
	"arenas", "mapped", "pages_in_use", "pages_peak", "max_arena_pages",
	"max_total_pages", "max_user_pages", "refused_limit",
	"refused_user_limit", "refused_hibernation", "refused_foreign_mmap",
	"fork_copy_failed", "revoked_hibernation",
};

/* ---- capabilities, without libcap ------------------------------------ */

static int cap_data(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};

	return syscall(SYS_capget, &hdr, data);
}

static bool has_effective_cap(int cap)
{
	struct __user_cap_data_struct data[2];

	if (cap_data(data))
		return false;
	return data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

/* Drop cap from every set of this process, for good. 0 or -1. */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (cap_data(data))
		return -1;
	data[CAP_TO_INDEX(cap)].effective &= ~CAP_TO_MASK(cap);
	data[CAP_TO_INDEX(cap)].permitted &= ~CAP_TO_MASK(cap);
	data[CAP_TO_INDEX(cap)].inheritable &= ~CAP_TO_MASK(cap);
	return syscall(SYS_capset, &hdr, data);
}

static int set_memlock_limit(size_t bytes)
{
	struct rlimit rl = { .rlim_cur = bytes, .rlim_max = bytes };

	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

static long thread_minor_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_minflt;
}

/*
 * /dev/kmsg positioned after the last record, to read only what comes
 * next: an fd, or -errno.
 */
static int kmsg_open_at_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Records logged since kmsg_open_at_end() that mention word, or -1. */
static int kmsg_records_mentioning(int fd, const char *word)
{
	char rec[8192];
	int found = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)	/* overwritten: skip ahead */
			continue;
		if (n < 0)
			return errno == EAGAIN ? found : -1;
		rec[n] = '\0';
		if (strstr(rec, word)) {
			fprintf(stderr, "# kmsg: %s", rec);
			found++;
		}
	}
}

/* ---- 1. the device and open() ---------------------------------------- */

TEST(device_node_is_0666_char_device)
{
	struct stat st;

	ASSERT_EQ(0, stat(SECARENA_DEVICE_PATH, &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	ASSERT_EQ(0666U, st.st_mode & 07777);
	ASSERT_EQ(10U, major(st.st_rdev));	/* MISC_MAJOR */
}

TEST(device_number_matches_sysfs_dev)
{
	unsigned int maj, min;
	struct stat st;
	char buf[64];

	ASSERT_LT(0, read_text_file(SECARENA_SYSFS_DIR "/dev", buf,
				    sizeof(buf)));
	ASSERT_EQ(2, sscanf(buf, "%u:%u", &maj, &min));
	ASSERT_EQ(0, stat(SECARENA_DEVICE_PATH, &st));
	ASSERT_EQ(maj, major(st.st_rdev));
	ASSERT_EQ(min, minor(st.st_rdev));
}

TEST(each_open_is_a_new_empty_arena)
{
	struct secarena_info info;
	struct arena a, b;
	int fd2;

	ASSERT_EQ(0, arena_create(&a, 2, 1, SECARENA_FORK_PRIVATE));
	memset(a.data, 0x11, 2 * PS);

	fd2 = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, secarena_get_info(fd2, &info));
	ASSERT_EQ(0U, info.flags);
	ASSERT_EQ(0U, info.data_pages);
	ASSERT_EQ(0U, info.data_size);

	/* The second file maps on its own, and its data starts zeroed. */
	ASSERT_EQ(0, arena_map_fd(&b, fd2, 2, 1));
	ASSERT_NE(a.base, b.base);
	ASSERT_TRUE(all_zero(b.data, 2 * PS));
	memset(b.data, 0x22, 2 * PS);
	ASSERT_EQ(0x11, a.data[0]);
	ASSERT_EQ(0x11, a.data[2 * PS - 1]);
	arena_destroy(&b);
	arena_destroy(&a);
}

TEST(reopen_via_proc_self_fd_is_a_new_arena)
{
	struct secarena_info info;
	struct arena a, b;
	char path[64];
	int fd2;

	ASSERT_EQ(0, arena_create(&a, 3, 1, SECARENA_FORK_SHARED));
	memset(a.data, 0x33, 3 * PS);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", a.fd);
	fd2 = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, secarena_get_info(fd2, &info));
	ASSERT_EQ(0U, info.flags);
	ASSERT_EQ(0U, info.data_pages);
	ASSERT_EQ(0U, info.data_size);
	ASSERT_EQ(1U, info.guard_pages);
	ASSERT_EQ((__u32)SECARENA_FORK_PRIVATE, info.fork_policy);

	/* Not configured: 4 pages are 1 guard, 2 data, 1 guard. */
	ASSERT_EQ(0, arena_map_fd(&b, fd2, 2, 1));
	ASSERT_TRUE(all_zero(b.data, 2 * PS));
	memset(b.data, 0x44, 2 * PS);
	ASSERT_EQ(0x33, a.data[0]);
	ASSERT_EQ(0, secarena_get_info(a.fd, &info));
	ASSERT_EQ(3U, info.data_pages);
	arena_destroy(&b);
	arena_destroy(&a);
}

TEST(lseek_fails_espipe)
{
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-1, lseek(fd, 0, SEEK_SET));
	ASSERT_EQ(ESPIPE, errno);
	ASSERT_EQ(-1, lseek(fd, 0, SEEK_CUR));
	ASSERT_EQ(ESPIPE, errno);
	ASSERT_EQ(-1, lseek(fd, 0, SEEK_END));
	ASSERT_EQ(ESPIPE, errno);
	close(fd);
}

TEST(read_and_write_fail_einval)
{
	char buf[16] = { 0 };
	struct arena a;

	ASSERT_EQ(0, arena_create(&a, 1, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(-1, read(a.fd, buf, sizeof(buf)));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, write(a.fd, buf, sizeof(buf)));
	ASSERT_EQ(EINVAL, errno);
	arena_destroy(&a);
}

TEST(rdonly_file_refuses_shared_writable_mmap_eacces)
{
	struct secarena_info info;
	int fd = secarena_open(O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 3 * PS, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0));
	ASSERT_EQ(EACCES, errno);
	/* Refused before the driver: the arena was never mapped. */
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(0U, info.flags);
	close(fd);
}

/* ---- 2. CONFIGURE and INFO ------------------------------------------- */

TEST(info_of_a_fresh_file)
{
	struct secarena_info info;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(0U, info.data_size);
	ASSERT_EQ(1U, info.guard_pages);
	ASSERT_EQ((__u32)SECARENA_FORK_PRIVATE, info.fork_policy);
	ASSERT_EQ(0U, info.data_pages);
	ASSERT_EQ(0U, info.flags);
	ASSERT_EQ(0U, info.reserved0);
	ASSERT_EQ(0U, info.reserved[0]);
	ASSERT_EQ(0U, info.reserved[1]);
	close(fd);
}

TEST(configure_is_reported_by_info)
{
	struct secarena_info info;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, secarena_configure(fd, 8 * PS, 2, SECARENA_FORK_SHARED));
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(8 * PS, info.data_size);
	ASSERT_EQ(2U, info.guard_pages);
	ASSERT_EQ((__u32)SECARENA_FORK_SHARED, info.fork_policy);
	ASSERT_EQ(0U, info.data_pages);
	ASSERT_EQ(SECARENA_INFO_CONFIGURED, info.flags);
	ASSERT_EQ(0U, info.reserved0);
	ASSERT_EQ(0U, info.reserved[0]);
	ASSERT_EQ(0U, info.reserved[1]);
	close(fd);
}

/* Each variant breaks one rule of CONFIGURE: EINVAL. */
FIXTURE(bad_config) {
	int fd;
};

FIXTURE_VARIANT(bad_config) {
	void (*make)(struct secarena_config *cfg);
};

static void cfg_valid(struct secarena_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->data_size = PS;
	cfg->guard_pages = 1;
	cfg->fork_policy = SECARENA_FORK_PRIVATE;
}

static void cfg_zero_data_size(struct secarena_config *c)
{
	cfg_valid(c);
	c->data_size = 0;
}

static void cfg_size_page_minus_one(struct secarena_config *c)
{
	cfg_valid(c);
	c->data_size = PS - 1;
}

static void cfg_size_page_plus_one(struct secarena_config *c)
{
	cfg_valid(c);
	c->data_size = PS + 1;
}

static void cfg_zero_guards(struct secarena_config *c)
{
	cfg_valid(c);
	c->guard_pages = 0;
}

static void cfg_guards_over_max(struct secarena_config *c)
{
	cfg_valid(c);
	c->guard_pages = SECARENA_GUARD_PAGES_MAX + 1;
}

static void cfg_guards_u32_max(struct secarena_config *c)
{
	cfg_valid(c);
	c->guard_pages = UINT32_MAX;
}

static void cfg_policy_3(struct secarena_config *c)
{
	cfg_valid(c);
	c->fork_policy = 3;
}

static void cfg_policy_u32_max(struct secarena_config *c)
{
	cfg_valid(c);
	c->fork_policy = UINT32_MAX;
}

static void cfg_reserved0(struct secarena_config *c)
{
	cfg_valid(c);
	c->reserved[0] = 1;
}

static void cfg_reserved1(struct secarena_config *c)
{
	cfg_valid(c);
	c->reserved[1] = 1ULL << 63;
}

/* A page-aligned size whose page count plus guards wraps around. */
static void cfg_size_overflows(struct secarena_config *c)
{
	cfg_valid(c);
	c->data_size = UINT64_MAX & ~(uint64_t)(PS - 1);
}

/* 2^31 - 1 data pages + 2 guards = 2^31 + 1 pages. */
static void cfg_total_over_2e31(struct secarena_config *c)
{
	cfg_valid(c);
	c->data_size = ((1ULL << 31) - 1) * PS;
}

/* 2^31 - 2047 data pages + 2 * 1024 guards = 2^31 + 1 pages. */
static void cfg_total_over_2e31_max_guards(struct secarena_config *c)
{
	cfg_valid(c);
	c->guard_pages = SECARENA_GUARD_PAGES_MAX;
	c->data_size = ((1ULL << 31) - 2 * SECARENA_GUARD_PAGES_MAX + 1) * PS;
}

FIXTURE_VARIANT_ADD(bad_config, zero_data_size) { .make = cfg_zero_data_size };
FIXTURE_VARIANT_ADD(bad_config, size_page_minus_one) { .make = cfg_size_page_minus_one };
FIXTURE_VARIANT_ADD(bad_config, size_page_plus_one) { .make = cfg_size_page_plus_one };
FIXTURE_VARIANT_ADD(bad_config, zero_guard_pages) { .make = cfg_zero_guards };
FIXTURE_VARIANT_ADD(bad_config, guard_pages_over_max) { .make = cfg_guards_over_max };
FIXTURE_VARIANT_ADD(bad_config, guard_pages_u32_max) { .make = cfg_guards_u32_max };
FIXTURE_VARIANT_ADD(bad_config, fork_policy_3) { .make = cfg_policy_3 };
FIXTURE_VARIANT_ADD(bad_config, fork_policy_u32_max) { .make = cfg_policy_u32_max };
FIXTURE_VARIANT_ADD(bad_config, reserved0_nonzero) { .make = cfg_reserved0 };
FIXTURE_VARIANT_ADD(bad_config, reserved1_nonzero) { .make = cfg_reserved1 };
FIXTURE_VARIANT_ADD(bad_config, data_size_overflows) { .make = cfg_size_overflows };
FIXTURE_VARIANT_ADD(bad_config, total_over_2e31_pages) { .make = cfg_total_over_2e31 };
FIXTURE_VARIANT_ADD(bad_config, total_over_2e31_pages_max_guards) {
	.make = cfg_total_over_2e31_max_guards
};

FIXTURE_SETUP(bad_config)
{
	self->fd = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(bad_config)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(bad_config, configure_einval)
{
	struct secarena_config cfg;
	struct secarena_info info;

	variant->make(&cfg);
	ASSERT_EQ(-1, ioctl(self->fd, SECARENA_IOC_CONFIGURE, &cfg));
	ASSERT_EQ(EINVAL, errno);
	/* Nothing was recorded. */
	ASSERT_EQ(0, secarena_get_info(self->fd, &info));
	ASSERT_EQ(0U, info.flags);
	ASSERT_EQ(0U, info.data_size);
	ASSERT_EQ(1U, info.guard_pages);
	ASSERT_EQ((__u32)SECARENA_FORK_PRIVATE, info.fork_policy);
}

TEST(configure_accepts_the_limits)
{
	struct secarena_info info;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, secarena_configure(fd, PS, SECARENA_GUARD_PAGES_MAX,
					SECARENA_FORK_SHARED));
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ((__u32)SECARENA_GUARD_PAGES_MAX, info.guard_pages);
	/* Exactly 2^31 pages in all is allowed; only more is refused. */
	ASSERT_EQ(0, secarena_configure(fd, ((1ULL << 31) - 2) * PS, 1,
					SECARENA_FORK_NONE));
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(((1ULL << 31) - 2) * PS, info.data_size);
	ASSERT_EQ((__u32)SECARENA_FORK_NONE, info.fork_policy);
	ASSERT_EQ(0, secarena_configure(fd,
		((1ULL << 31) - 2 * SECARENA_GUARD_PAGES_MAX) * PS,
		SECARENA_GUARD_PAGES_MAX, SECARENA_FORK_PRIVATE));
	close(fd);
}

TEST(configure_and_info_bad_pointer_efault)
{
	struct secarena_info *ro_info;
	char *two;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-1, ioctl(fd, SECARENA_IOC_CONFIGURE, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(fd, SECARENA_IOC_INFO, NULL));
	ASSERT_EQ(EFAULT, errno);

	/* A structure that runs into an unmapped page. */
	two = mmap(NULL, 2 * PS, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, two);
	ASSERT_EQ(0, munmap(two + PS, PS));
	memset(two, 0, PS);
	((struct secarena_config *)(two + PS - 8))->data_size = PS;
	ASSERT_EQ(-1, ioctl(fd, SECARENA_IOC_CONFIGURE, two + PS - 8));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(fd, SECARENA_IOC_INFO, two + PS - 8));
	ASSERT_EQ(EFAULT, errno);

	/* INFO into memory that is readable but not writable. */
	ro_info = mmap(NULL, PS, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro_info);
	ASSERT_EQ(-1, ioctl(fd, SECARENA_IOC_INFO, ro_info));
	ASSERT_EQ(EFAULT, errno);
	munmap(ro_info, PS);
	munmap(two, PS);
	close(fd);
}

TEST(configure_last_successful_call_wins)
{
	struct secarena_info info;
	struct arena a;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, secarena_configure(fd, 2 * PS, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, secarena_configure(fd, 5 * PS, 3, SECARENA_FORK_NONE));
	ASSERT_EQ(-1, secarena_configure(fd, 7 * PS, 0, SECARENA_FORK_SHARED));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(5 * PS, info.data_size);
	ASSERT_EQ(3U, info.guard_pages);
	ASSERT_EQ((__u32)SECARENA_FORK_NONE, info.fork_policy);
	ASSERT_EQ(SECARENA_INFO_CONFIGURED, info.flags);

	/* The first geometry's length no longer fits. */
	ASSERT_EQ(MAP_FAILED, mmap(NULL, arena_len(2, 1), PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, arena_map_fd(&a, fd, 5, 3));
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(5U, info.data_pages);
	arena_destroy(&a);
}

TEST(configure_after_mmap_ebusy)
{
	struct secarena_info info;
	struct arena a, b;
	int fd;

	ASSERT_EQ(0, arena_create(&a, 2, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(-1, secarena_configure(a.fd, 2 * PS, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(EBUSY, errno);
	/* Values are checked before the state: bad values stay EINVAL. */
	ASSERT_EQ(-1, secarena_configure(a.fd, 0, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, arena_unmap(&a));
	/* Spent: still busy. */
	ASSERT_EQ(-1, secarena_configure(a.fd, 2 * PS, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, secarena_get_info(a.fd, &info));
	ASSERT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_SPENT, info.flags);

	/* Also for a file that was mapped without CONFIGURE. */
	fd = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, arena_map_fd(&b, fd, 1, 1));
	ASSERT_EQ(-1, secarena_configure(fd, PS, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(EBUSY, errno);
	arena_destroy(&b);
	arena_destroy(&a);
}

TEST(unknown_ioctl_enotty)
{
	const unsigned long cmds[] = {
		_IO(SECARENA_IOC_MAGIC, 0x00),
		_IO(SECARENA_IOC_MAGIC, 0x04),
		_IO(SECARENA_IOC_MAGIC, 0xff),
		/* right number, wrong direction or size: another request */
		_IOR(SECARENA_IOC_MAGIC, 0x01, struct secarena_config),
		_IOW(SECARENA_IOC_MAGIC, 0x01, __u64),
		_IOW(SECARENA_IOC_MAGIC, 0x02, struct secarena_info),
		_IOR(SECARENA_IOC_MAGIC, 0x02, __u32),
		_IOW(SECARENA_IOC_MAGIC, 0x03, __u32),
		_IO(0xB8, 0x01),
		TCGETS,
	};
	char buf[64] = { 0 };
	size_t i;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		errno = 0;
		EXPECT_EQ(-1, ioctl(fd, cmds[i], buf)) {
			TH_LOG("cmd %#lx", cmds[i]);
		}
		EXPECT_EQ(ENOTTY, errno) {
			TH_LOG("cmd %#lx", cmds[i]);
		}
	}
	close(fd);
}

/* ---- 3. mmap() --------------------------------------------------------- */

TEST(mmap_private_einval)
{
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 3 * PS, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, secarena_configure(fd, PS, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 3 * PS, PROT_READ, MAP_PRIVATE, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	close(fd);
}

TEST(mmap_nonzero_offset_einval)
{
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 3 * PS, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, PS));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, secarena_configure(fd, PS, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 3 * PS, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 16 * PS));
	ASSERT_EQ(EINVAL, errno);
	close(fd);
}

TEST(mmap_configured_length_must_match)
{
	struct arena a;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, secarena_configure(fd, 4 * PS, 2, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(MAP_FAILED, mmap(NULL, arena_len(4, 2) - PS,
				   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, arena_len(4, 2) + PS,
				   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	/* The data size alone, without the guards. */
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 4 * PS, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, arena_map_fd(&a, fd, 4, 2));
	arena_destroy(&a);
}

TEST(mmap_unconfigured_has_one_guard_each_side)
{
	struct secarena_info info;
	struct fault_report rep;
	struct arena a;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, arena_map_fd(&a, fd, 3, 1));	/* 5 pages */
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(3 * PS, info.data_size);
	ASSERT_EQ(1U, info.guard_pages);
	ASSERT_EQ((__u32)SECARENA_FORK_PRIVATE, info.fork_policy);
	ASSERT_EQ(3U, info.data_pages);
	ASSERT_EQ(SECARENA_INFO_MAPPED, info.flags);

	memset(a.data, 0x5c, 3 * PS);
	ASSERT_EQ(0, access_in_child(a.base + PS - 1, false, &rep));
	ASSERT_EQ(SIGSEGV, rep.signal);
	ASSERT_EQ(0, access_in_child(a.base + 4 * PS, false, &rep));
	ASSERT_EQ(SIGSEGV, rep.signal);
	ASSERT_EQ(0, access_in_child(a.base + PS, true, &rep));
	ASSERT_EQ(0, rep.signal);
	ASSERT_EQ(0, rep.exit_code);
	ASSERT_EQ(0, access_in_child(a.base + 4 * PS - 1, true, &rep));
	ASSERT_EQ(0, rep.signal);
	ASSERT_EQ(0, rep.exit_code);
	arena_destroy(&a);
}

TEST(mmap_unconfigured_under_three_pages_einval)
{
	size_t pages;

	for (pages = 1; pages <= 2; pages++) {
		int fd = secarena_open(O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd);
		ASSERT_EQ(MAP_FAILED, mmap(NULL, pages * PS, PROT_READ | PROT_WRITE,
					   MAP_SHARED, fd, 0));
		ASSERT_EQ(EINVAL, errno);
		close(fd);
	}
}

TEST(mmap_length_is_rounded_up_to_pages)
{
	struct secarena_info info;
	char *p;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	/* Not configured: 3 pages less a bit is 3 pages, 1 of data. */
	ASSERT_LE(0, fd);
	p = mmap(NULL, 3 * PS - 100, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(1U, info.data_pages);
	ASSERT_EQ(PS, info.data_size);
	p[PS] = 1;
	ASSERT_EQ(0, munmap(p, 3 * PS));
	close(fd);

	/* Configured: the rounded length is what must match. */
	fd = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, secarena_configure(fd, 2 * PS, 1, SECARENA_FORK_PRIVATE));
	p = mmap(NULL, 4 * PS - 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(2U, info.data_pages);
	ASSERT_EQ(0, munmap(p, 4 * PS));
	close(fd);
}

TEST(second_mmap_of_a_file_ebusy)
{
	struct arena a;

	ASSERT_EQ(0, arena_create(&a, 2, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(MAP_FAILED, mmap(NULL, a.len, PROT_READ | PROT_WRITE,
				   MAP_SHARED, a.fd, 0));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, arena_unmap(&a));
	/* A file maps once: spent is still busy. */
	ASSERT_EQ(MAP_FAILED, mmap(NULL, a.len, PROT_READ | PROT_WRITE,
				   MAP_SHARED, a.fd, 0));
	ASSERT_EQ(EBUSY, errno);
	arena_destroy(&a);
}

/*
 * Minor faults taken by reading every word of buf and writing each page;
 * *nonzero is set if a word was not 0.
 */
static __attribute__((noinline)) long faults_reading_and_writing(char *buf,
	size_t pages, bool *nonzero)
{
	long before, after;
	size_t i;

	*nonzero = false;
	before = thread_minor_faults();
	for (i = 0; i < pages * PS; i += sizeof(long))
		if (*(volatile long *)(buf + i))
			*nonzero = true;
	for (i = 0; i < pages; i++)
		((volatile char *)buf)[i * PS + 7] = 1;
	after = thread_minor_faults();
	return after - before;
}

/*
 * MAP_FIXED over the whole arena splits nothing, so it is not refused: it
 * unmaps the arena as munmap() would (pages wiped and uncharged), and the
 * new mapping takes the range.
 */
TEST(map_fixed_over_the_whole_arena_unmaps_it)
{
	long long in_use = secarena_counter("pages_in_use");
	struct secarena_info info;
	struct arena a;
	char *p;

	ASSERT_LE(0, in_use);
	ASSERT_EQ(0, arena_create(&a, 4, 1, SECARENA_FORK_PRIVATE));
	memset(a.data, 0x77, 4 * PS);
	ASSERT_EQ(in_use + 4, secarena_counter("pages_in_use"));
	p = mmap(a.base, a.len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ((void *)a.base, p);
	ASSERT_EQ(in_use, secarena_counter("pages_in_use"));
	ASSERT_EQ(0, maps_contain(0, SECARENA_DEVICE_PATH));
	ASSERT_TRUE(all_zero(p + PS, 4 * PS));
	ASSERT_EQ(0, secarena_get_info(a.fd, &info));
	ASSERT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_SPENT, info.flags);
	ASSERT_EQ(0, munmap(p, a.len));
	close(a.fd);
}

static int dontfork_child(void *arg)
{
	(void)arg;
	CHILD_CHECK(maps_contain(0, SECARENA_DEVICE_PATH) == 0);
	CHILD_CHECK(vm_pin_kb(0) == 0);
	return 0;
}

/*
 * MADV_DONTFORK makes any policy NONE, and for good: MADV_DOFORK is
 * refused on the arena (VM_IO), so no child ever gets the range back.
 */
TEST(madv_dontfork_is_one_way)
{
	long long mapped = secarena_counter("mapped");
	struct arena a;
	int code = -1;

	ASSERT_LE(0, mapped);
	ASSERT_EQ(0, arena_create(&a, 2, 1, SECARENA_FORK_SHARED));
	ASSERT_EQ(0, madvise(a.base, a.len, MADV_DONTFORK));
	ASSERT_EQ(-1, madvise(a.base, a.len, MADV_DOFORK));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, child_fatal_signal(dontfork_child, NULL, &code));
	ASSERT_EQ(0, code);
	ASSERT_EQ(mapped + 1, secarena_counter("mapped"));
	arena_destroy(&a);
}

TEST(data_is_zeroed_and_present_at_mmap)
{
	const size_t pages = 16;
	struct arena a;
	bool nonzero;
	char *warm;

	/* Fault in the code the measurement runs, on memory already present. */
	warm = calloc(pages, PS);
	ASSERT_NE(NULL, warm);
	memset(warm, 0, pages * PS);
	ASSERT_EQ(0, faults_reading_and_writing(warm, pages, &nonzero));

	ASSERT_EQ(0, arena_create(&a, pages, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, faults_reading_and_writing(a.data, pages, &nonzero));
	ASSERT_FALSE(nonzero);
	free(warm);
	arena_destroy(&a);
}

TEST(vmpin_counts_data_pages)
{
	long long pin0 = vm_pin_kb(0);
	struct arena a, b;

	ASSERT_LE(0, pin0);
	ASSERT_EQ(0, arena_create(&a, 8, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(pin0 + pages_to_kb(8), vm_pin_kb(0));
	/* Guards are not charged. */
	ASSERT_EQ(0, arena_create(&b, 3, 7, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(pin0 + pages_to_kb(11), vm_pin_kb(0));
	ASSERT_EQ(0, arena_unmap(&a));
	ASSERT_EQ(pin0 + pages_to_kb(3), vm_pin_kb(0));
	/* Closing the file of a live mapping frees nothing. */
	close(b.fd);
	b.fd = -1;
	ASSERT_EQ(pin0 + pages_to_kb(3), vm_pin_kb(0));
	ASSERT_EQ(0x00, b.data[0]);
	ASSERT_EQ(0, arena_unmap(&b));
	ASSERT_EQ(pin0, vm_pin_kb(0));
	arena_destroy(&a);
}

TEST(info_follows_the_mapping_lifecycle)
{
	struct secarena_info info;
	struct arena a;
	int fd;

	/* Configured. */
	fd = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, secarena_configure(fd, 6 * PS, 2, SECARENA_FORK_NONE));
	ASSERT_EQ(0, arena_map_fd(&a, fd, 6, 2));
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_MAPPED, info.flags);
	ASSERT_EQ(6U, info.data_pages);
	ASSERT_EQ(6 * PS, info.data_size);
	ASSERT_EQ(2U, info.guard_pages);
	ASSERT_EQ((__u32)SECARENA_FORK_NONE, info.fork_policy);
	ASSERT_EQ(0, arena_unmap(&a));
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_SPENT, info.flags);
	ASSERT_EQ(0U, info.data_pages);
	ASSERT_EQ(6 * PS, info.data_size);
	ASSERT_EQ(2U, info.guard_pages);
	ASSERT_EQ((__u32)SECARENA_FORK_NONE, info.fork_policy);
	ASSERT_EQ(0U, info.reserved0);
	ASSERT_EQ(0U, info.reserved[0]);
	ASSERT_EQ(0U, info.reserved[1]);
	arena_destroy(&a);

	/*
	 * Not configured: once mapped, INFO reports the mapped geometry,
	 * and after munmap still that of the mapping the file had.
	 */
	fd = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, arena_map_fd(&a, fd, 4, 1));
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(SECARENA_INFO_MAPPED, info.flags);
	ASSERT_EQ(4U, info.data_pages);
	ASSERT_EQ(0, arena_unmap(&a));
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(SECARENA_INFO_SPENT, info.flags);
	ASSERT_EQ(0U, info.data_pages);
	ASSERT_EQ(4 * PS, info.data_size);
	ASSERT_EQ(1U, info.guard_pages);
	ASSERT_EQ((__u32)SECARENA_FORK_PRIVATE, info.fork_policy);
	arena_destroy(&a);
}

TEST(maps_shows_the_device)
{
	struct arena a;

	ASSERT_EQ(0, maps_contain(0, SECARENA_DEVICE_PATH));
	ASSERT_EQ(0, arena_create(&a, 1, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(1, maps_contain(0, SECARENA_DEVICE_PATH));
	ASSERT_EQ(0, arena_unmap(&a));
	ASSERT_EQ(0, maps_contain(0, SECARENA_DEVICE_PATH));
	arena_destroy(&a);
}

/* ---- 8. limits --------------------------------------------------------- */

/* Saves both module parameters and puts them back, even on failure. */
FIXTURE(module_params) {
	long long max_arena, max_total;
};

FIXTURE_SETUP(module_params)
{
	self->max_arena = module_param_get("max_arena_pages");
	self->max_total = module_param_get("max_total_pages");
	ASSERT_LE(0, self->max_arena);
	ASSERT_LE(0, self->max_total);
	if (geteuid() != 0)
		SKIP(return, "changing module parameters needs root");
}

FIXTURE_TEARDOWN(module_params)
{
	if (self->max_arena >= 0)
		EXPECT_EQ(0, module_param_set("max_arena_pages", self->max_arena));
	if (self->max_total >= 0)
		EXPECT_EQ(0, module_param_set("max_total_pages", self->max_total));
}

TEST_F(module_params, max_arena_pages_enomem)
{
	long long refused = secarena_counter("refused_limit");
	long long in_use = secarena_counter("pages_in_use");
	struct arena a, b;
	int fd;

	ASSERT_LE(0, refused);
	ASSERT_LE(0, in_use);
	ASSERT_EQ(0, module_param_set("max_arena_pages", 4));
	ASSERT_EQ(4, module_param_get("max_arena_pages"));
	ASSERT_EQ(4, secarena_counter("max_arena_pages"));

	ASSERT_EQ(0, arena_create(&a, 4, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(ENOMEM, arena_create(&b, 5, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(refused + 1, secarena_counter("refused_limit"));
	ASSERT_EQ(in_use + 4, secarena_counter("pages_in_use"));
	/* Guards do not count. */
	ASSERT_EQ(0, arena_create(&b, 4, SECARENA_GUARD_PAGES_MAX,
				  SECARENA_FORK_PRIVATE));
	/* Not configured: length - 2 guard pages is the data. */
	fd = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 7 * PS, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0));
	ASSERT_EQ(ENOMEM, errno);
	ASSERT_EQ(refused + 2, secarena_counter("refused_limit"));
	close(fd);
	arena_destroy(&b);
	arena_destroy(&a);
}

TEST_F(module_params, max_total_pages_enomem)
{
	long long refused = secarena_counter("refused_limit");
	long long in_use = secarena_counter("pages_in_use");
	struct arena a, b, c;

	ASSERT_LE(0, refused);
	ASSERT_LE(0, in_use);
	ASSERT_EQ(0, module_param_set("max_total_pages", in_use + 6));
	ASSERT_EQ(in_use + 6, secarena_counter("max_total_pages"));

	ASSERT_EQ(0, arena_create(&a, 4, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, arena_create(&b, 2, 3, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(in_use + 6, secarena_counter("pages_in_use"));
	ASSERT_EQ(ENOMEM, arena_create(&c, 1, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(refused + 1, secarena_counter("refused_limit"));
	ASSERT_EQ(in_use + 6, secarena_counter("pages_in_use"));

	/* Freed pages make room again. */
	ASSERT_EQ(0, arena_unmap(&a));
	ASSERT_EQ(ENOMEM, arena_create(&c, 5, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(refused + 2, secarena_counter("refused_limit"));
	ASSERT_EQ(0, arena_create(&c, 4, 1, SECARENA_FORK_PRIVATE));
	arena_destroy(&c);
	arena_destroy(&b);
	arena_destroy(&a);
}

TEST_F(module_params, sysfs_max_files_follow_the_parameters)
{
	ASSERT_EQ(self->max_arena, secarena_counter("max_arena_pages"));
	ASSERT_EQ(self->max_total, secarena_counter("max_total_pages"));
	ASSERT_EQ(0, module_param_set("max_arena_pages", 1234));
	ASSERT_EQ(0, module_param_set("max_total_pages", 56789));
	ASSERT_EQ(1234, secarena_counter("max_arena_pages"));
	ASSERT_EQ(56789, secarena_counter("max_total_pages"));
}

TEST(module_params_have_their_defaults)
{
	ASSERT_EQ(16384, module_param_get("max_arena_pages"));
	ASSERT_EQ(262144, module_param_get("max_total_pages"));
	ASSERT_EQ(65536, module_param_get("max_user_pages"));
	ASSERT_EQ(16384, secarena_counter("max_arena_pages"));
	ASSERT_EQ(262144, secarena_counter("max_total_pages"));
	ASSERT_EQ(65536, secarena_counter("max_user_pages"));
}

/* Runs as root without CAP_IPC_LOCK, RLIMIT_MEMLOCK = 16 pages. */
static int memlock_limit_child(void *arg)
{
	struct arena a, b;

	(void)arg;
	CHILD_CHECK(set_memlock_limit(16 * PS) == 0);
	CHILD_CHECK(drop_cap(CAP_IPC_LOCK) == 0);
	CHILD_CHECK(!has_effective_cap(CAP_IPC_LOCK));
	CHILD_CHECK(vm_pin_kb(0) == 0);

	CHILD_CHECK(arena_create(&a, 16, 1, SECARENA_FORK_PRIVATE) == 0);
	CHILD_CHECK(vm_pin_kb(0) == pages_to_kb(16));
	CHILD_CHECK(arena_create(&b, 1, 1, SECARENA_FORK_PRIVATE) == EAGAIN);
	CHILD_CHECK(vm_pin_kb(0) == pages_to_kb(16));

	/* Unmapping gives the budget back. */
	CHILD_CHECK(arena_unmap(&a) == 0);
	CHILD_CHECK(vm_pin_kb(0) == 0);
	CHILD_CHECK(arena_create(&b, 17, 1, SECARENA_FORK_PRIVATE) == EAGAIN);
	CHILD_CHECK(vm_pin_kb(0) == 0);
	CHILD_CHECK(arena_create(&b, 10, 1, SECARENA_FORK_PRIVATE) == 0);
	CHILD_CHECK(arena_create(&a, 6, 2, SECARENA_FORK_PRIVATE) == 0);
	CHILD_CHECK(vm_pin_kb(0) == pages_to_kb(16));
	arena_destroy(&a);
	arena_destroy(&b);
	return 0;
}

TEST(rlimit_memlock_eagain_without_cap_ipc_lock)
{
	long long refused = secarena_counter("refused_limit");
	int code = -1;

	ASSERT_LE(0, refused);
	ASSERT_EQ(0, child_fatal_signal(memlock_limit_child, NULL, &code));
	ASSERT_EQ(0, code);
	ASSERT_EQ(refused + 2, secarena_counter("refused_limit"));
}

/* mlock()ed memory is VmLck, not VmPin: it leaves the arena budget alone. */
static int memlock_mlock_child(void *arg)
{
	struct arena a;
	char *anon;

	(void)arg;
	CHILD_CHECK(set_memlock_limit(16 * PS) == 0);
	CHILD_CHECK(drop_cap(CAP_IPC_LOCK) == 0);
	anon = mmap(NULL, 16 * PS, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(anon != MAP_FAILED);
	CHILD_CHECK(mlock(anon, 16 * PS) == 0);
	CHILD_CHECK(proc_status_kb(0, "VmLck") == pages_to_kb(16));
	CHILD_CHECK(arena_create(&a, 16, 1, SECARENA_FORK_PRIVATE) == 0);
	CHILD_CHECK(vm_pin_kb(0) == pages_to_kb(16));
	arena_destroy(&a);
	return 0;
}

TEST(rlimit_memlock_budget_ignores_mlocked_memory)
{
	int code = -1;

	ASSERT_EQ(0, child_fatal_signal(memlock_mlock_child, NULL, &code));
	ASSERT_EQ(0, code);
}

static int memlock_with_cap_child(void *arg)
{
	struct arena a;

	(void)arg;
	CHILD_CHECK(set_memlock_limit(16 * PS) == 0);
	CHILD_CHECK(arena_create(&a, 17, 1, SECARENA_FORK_PRIVATE) == 0);
	CHILD_CHECK(vm_pin_kb(0) == pages_to_kb(17));
	arena_destroy(&a);
	return 0;
}

TEST(rlimit_memlock_does_not_bind_cap_ipc_lock)
{
	int code = -1;

	if (!has_effective_cap(CAP_IPC_LOCK))
		SKIP(return, "needs CAP_IPC_LOCK");
	ASSERT_EQ(0, child_fatal_signal(memlock_with_cap_child, NULL, &code));
	ASSERT_EQ(0, code);
}

/* Runs inside a memory cgroup limited to 1 MiB. */
static int memcg_limit_child(void)
{
	long long in_use = secarena_counter("pages_in_use");
	struct arena a;

	CHILD_CHECK(in_use >= 0);
	/* 4 MiB of data cannot be charged: refused, not OOM-killed. */
	CHILD_CHECK(arena_create(&a, 1024, 1, SECARENA_FORK_PRIVATE) == ENOMEM);
	CHILD_CHECK(secarena_counter("pages_in_use") == in_use);
	CHILD_CHECK(vm_pin_kb(0) == 0);
	/* A small one still fits. */
	CHILD_CHECK(arena_create(&a, 4, 1, SECARENA_FORK_PRIVATE) == 0);
	CHILD_CHECK(secarena_counter("pages_in_use") == in_use + 4);
	arena_destroy(&a);
	return 0;
}

FIXTURE(memcg) {
	struct test_cgroup cg;
};

FIXTURE_SETUP(memcg)
{
	int err = test_cgroup_make(&self->cg, "secarena-memcg", "1M");

	if (err == -ENOENT)
		SKIP(return, "no cgroup2 hierarchy at " CGROUP_ROOT);
	if (err == -EOPNOTSUPP)
		SKIP(return, "cgroup2 has no memory controller");
	if (err == -EPERM)
		SKIP(return, "making a cgroup needs root");
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(memcg)
{
	EXPECT_EQ(0, test_cgroup_remove(&self->cg));
}

TEST_F(memcg, memcg_limit_enomem)
{
	int kmsg = kmsg_open_at_end();
	int go[2], code = -1;
	char byte;
	pid_t pid;

	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(go[1]);
		CHILD_CHECK(read_full(go[0], &byte, 1) == 0);
		_exit(memcg_limit_child());
	}
	close(go[0]);
	ASSERT_EQ(0, test_cgroup_enter(&self->cg, pid));
	ASSERT_EQ(0, write_full(go[1], "g", 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);
	ASSERT_EQ(0, test_cgroup_key(&self->cg, "memory.events", "oom_kill"));
	if (kmsg >= 0) {
		ASSERT_EQ(0, kmsg_records_mentioning(kmsg, "secarena"));
		close(kmsg);
	}
}

/* A foreign mmap, for the log test: fork child with the owner's file. */
static int foreign_mmap_child(void *arg)
{
	struct arena *a = arg;

	CHILD_CHECK(mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 a->fd, 0) == MAP_FAILED);
	CHILD_CHECK(errno == EPERM);
	return 0;
}

/* Every refusal path at once; none of them may write to the log. */
TEST_F(module_params, refusals_write_nothing_to_the_kernel_log)
{
	struct secarena_config bad = { .data_size = 0, .guard_pages = 1 };
	struct secarena_config good = { .data_size = PS, .guard_pages = 1 };
	int kmsg = kmsg_open_at_end();
	struct arena a, b;
	int code = -1, fd;

	if (kmsg == -EPERM || kmsg == -EACCES)
		SKIP(return, "reading /dev/kmsg needs CAP_SYSLOG");
	ASSERT_LE(0, kmsg);

	/* RLIMIT_MEMLOCK refusals; first, while no arena here is inherited. */
	ASSERT_EQ(0, child_fatal_signal(memlock_limit_child, NULL, &code));
	ASSERT_EQ(0, code);

	ASSERT_EQ(0, arena_create(&a, 2, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(-1, ioctl(a.fd, SECARENA_IOC_CONFIGURE, &good));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(-1, ioctl(a.fd, _IO(SECARENA_IOC_MAGIC, 0x7f)));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, a.len, PROT_READ | PROT_WRITE,
				   MAP_SHARED, a.fd, 0));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(-1, mprotect(a.base, a.len, PROT_READ | PROT_EXEC));
	ASSERT_EQ(EACCES, errno);
	ASSERT_EQ(-1, munmap(a.base, page_size()));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, child_fatal_signal(foreign_mmap_child, &a, &code));
	ASSERT_EQ(0, code);

	fd = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(-1, ioctl(fd, SECARENA_IOC_CONFIGURE, &bad));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 3 * PS, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, fd, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 3 * PS, PROT_READ | PROT_EXEC,
				   MAP_SHARED, fd, 0));
	ASSERT_EQ(EPERM, errno);
	close(fd);

	ASSERT_EQ(0, module_param_set("max_arena_pages", 2));
	ASSERT_EQ(ENOMEM, arena_create(&b, 3, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, module_param_set("max_arena_pages", self->max_arena));
	ASSERT_EQ(0, module_param_set("max_total_pages",
				      secarena_counter("pages_in_use")));
	ASSERT_EQ(ENOMEM, arena_create(&b, 1, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, module_param_set("max_total_pages", self->max_total));

	ASSERT_EQ(0, kmsg_records_mentioning(kmsg, "secarena"));
	close(kmsg);
	arena_destroy(&a);
}

/* ---- 10. sysfs ---------------------------------------------------------- */

TEST(sysfs_counters_are_read_only_decimal_lines)
{
	char path[256], buf[64];
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(sysfs_counter_names); i++) {
		snprintf(path, sizeof(path), SECARENA_SYSFS_DIR "/%s",
			 sysfs_counter_names[i]);
		ASSERT_EQ(0, stat(path, &st)) {
			TH_LOG("%s", path);
		}
		EXPECT_EQ((mode_t)(S_IFREG | 0444), st.st_mode) {
			TH_LOG("%s", path);
		}
		ASSERT_LT(0, read_text_file(path, buf, sizeof(buf)));
		EXPECT_LE(0, parse_decimal_line(buf)) {
			TH_LOG("%s: \"%s\"", path, buf);
		}
		/* Even root cannot write an attribute that has no store. */
		fd = open(path, O_WRONLY | O_CLOEXEC);
		EXPECT_EQ(-1, fd) {
			TH_LOG("%s", path);
		}
		EXPECT_EQ(EACCES, errno) {
			TH_LOG("%s", path);
		}
		if (fd >= 0)
			close(fd);
	}
}

TEST(sysfs_arenas_counts_open_files)
{
	long long arenas = secarena_counter("arenas");
	struct arena a;
	int fds[3], i;

	ASSERT_LE(0, arenas);
	for (i = 0; i < 3; i++) {
		fds[i] = secarena_open(O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]);
	}
	ASSERT_EQ(arenas + 3, secarena_counter("arenas"));
	ASSERT_EQ(0, arena_map_fd(&a, fds[0], 1, 1));
	ASSERT_EQ(arenas + 3, secarena_counter("arenas"));
	for (i = 0; i < 3; i++)
		close(fds[i]);
	/* The live mapping holds its file: not released yet. */
	ASSERT_EQ(arenas + 1, secarena_counter("arenas"));
	ASSERT_EQ(0, arena_unmap(&a));
	ASSERT_EQ(arenas, secarena_counter("arenas"));
}

TEST(sysfs_mapped_and_pages_follow_mappings)
{
	long long mapped = secarena_counter("mapped");
	long long in_use = secarena_counter("pages_in_use");
	long long peak = secarena_counter("pages_peak");
	long long want_peak;
	struct arena a, b;

	ASSERT_LE(0, mapped);
	ASSERT_LE(0, in_use);
	ASSERT_LE(in_use, peak);
	ASSERT_EQ(0, arena_create(&a, 5, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(mapped + 1, secarena_counter("mapped"));
	ASSERT_EQ(in_use + 5, secarena_counter("pages_in_use"));
	ASSERT_EQ(0, arena_create(&b, 9, 4, SECARENA_FORK_SHARED));
	ASSERT_EQ(mapped + 2, secarena_counter("mapped"));
	ASSERT_EQ(in_use + 14, secarena_counter("pages_in_use"));
	want_peak = peak > in_use + 14 ? peak : in_use + 14;
	ASSERT_EQ(want_peak, secarena_counter("pages_peak"));

	ASSERT_EQ(0, arena_unmap(&a));
	ASSERT_EQ(mapped + 1, secarena_counter("mapped"));
	ASSERT_EQ(in_use + 9, secarena_counter("pages_in_use"));
	ASSERT_EQ(0, arena_unmap(&b));
	ASSERT_EQ(mapped, secarena_counter("mapped"));
	ASSERT_EQ(in_use, secarena_counter("pages_in_use"));
	/* The peak stays. */
	ASSERT_EQ(want_peak, secarena_counter("pages_peak"));
	arena_destroy(&a);
	arena_destroy(&b);
}

TEST(sysfs_pages_peak_is_the_highest_use)
{
	long long in_use = secarena_counter("pages_in_use");
	long long peak = secarena_counter("pages_peak");
	/* One page more than the peak so far, to move it. */
	size_t pages = (size_t)(peak - in_use) + 1;
	struct arena a;

	ASSERT_LE(0, in_use);
	ASSERT_LE(in_use, peak);
	if ((long long)pages > module_param_get("max_arena_pages"))
		SKIP(return, "peak %lld is more than one arena can add to %lld",
		     peak, in_use);
	ASSERT_EQ(0, arena_create(&a, pages, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(peak + 1, secarena_counter("pages_peak"));
	ASSERT_EQ(0, arena_unmap(&a));
	ASSERT_EQ(peak + 1, secarena_counter("pages_peak"));
	arena_destroy(&a);
}

TEST_HARNESS_MAIN
