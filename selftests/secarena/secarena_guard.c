// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: guard pages, and the calls that try to change an arena mapping
 * (mprotect, munmap, mremap, madvise, mmap MAP_FIXED) or make it
 * executable, and what /proc/PID/pagemap shows of it. The arena must come
 * out of each refused call intact, with its guards still faulting.
 */
/*
 * 6.1's kselftest_harness.h leaves parameters unused in code it expands
 * (TEST() wrappers, its SIGALRM handler); -Wextra would flag them here.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"

#include <sys/statvfs.h>

#include "secarena_helpers.h"

#define PS	page_size()

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK	18
#define MADV_KEEPONFORK	19
#endif

FIXTURE(guarded) {
	struct arena a;
	unsigned char secret[SECRET_LEN];
	long long vm_pin;
	long long pages_in_use;
};

FIXTURE_VARIANT(guarded) {
	unsigned int guard_pages;
	size_t data_pages;
};

FIXTURE_VARIANT_ADD(guarded, one_guard_one_page) {
	.guard_pages = 1,
	.data_pages = 1,
};

FIXTURE_VARIANT_ADD(guarded, three_guards_four_pages) {
	.guard_pages = 3,
	.data_pages = 4,
};

FIXTURE_SETUP(guarded)
{
	self->a.fd = -1;
	ASSERT_EQ(0, random_secret(self->secret));
	self->vm_pin = vm_pin_kb(0);
	self->pages_in_use = secarena_counter("pages_in_use");
	ASSERT_LE(0, self->vm_pin);
	ASSERT_LE(0, self->pages_in_use);
	ASSERT_EQ(0, arena_create(&self->a, variant->data_pages,
				  variant->guard_pages, SECARENA_FORK_PRIVATE));
	fill_with_secret(self->a.data, variant->data_pages * PS, self->secret);
}

FIXTURE_TEARDOWN(guarded)
{
	arena_destroy(&self->a);
}

static size_t guard_len(const FIXTURE_VARIANT(guarded) *variant)
{
	return variant->guard_pages * PS;
}

static size_t data_len(const FIXTURE_VARIANT(guarded) *variant)
{
	return variant->data_pages * PS;
}

/* An access at addr in a child dies of SIGSEGV, SEGV_MAPERR, at addr. */
#define ASSERT_GUARD_FAULT(addr, write) do {				\
	struct fault_report __rep;					\
	char *__addr = (addr);						\
									\
	ASSERT_EQ(0, access_in_child(__addr, write, &__rep));		\
	ASSERT_EQ(SIGSEGV, __rep.signal) {				\
		TH_LOG("%s at %p (offset %#lx)", write ? "write" : "read", \
		       __addr, (unsigned long)(__addr - self->a.base));	\
	}								\
	ASSERT_EQ(SIGSEGV, __rep.fault_signo);				\
	ASSERT_EQ(SEGV_MAPERR, __rep.fault_code);			\
	ASSERT_EQ((void *)__addr, __rep.fault_addr);			\
} while (0)

#define ASSERT_ACCESS_OK(addr, write) do {				\
	struct fault_report __rep;					\
									\
	ASSERT_EQ(0, access_in_child(addr, write, &__rep));		\
	ASSERT_EQ(0, __rep.signal);					\
	ASSERT_EQ(0, __rep.exit_code);					\
} while (0)

/* Data, pinning and accounting as the fixture left them; guards fault. */
#define ASSERT_ARENA_INTACT() do {					\
	ASSERT_TRUE(tiled_with_secret(self->a.data, data_len(variant),	\
				      self->secret));			\
	ASSERT_EQ(self->vm_pin + pages_to_kb(variant->data_pages),	\
		  vm_pin_kb(0));					\
	ASSERT_EQ(self->pages_in_use + (long long)variant->data_pages,	\
		  secarena_counter("pages_in_use"));			\
	ASSERT_GUARD_FAULT(self->a.data - 1, false);			\
	ASSERT_GUARD_FAULT(self->a.high_guard, true);			\
} while (0)

/* ---- 4. guards ------------------------------------------------------- */

TEST_F(guarded, every_guard_page_faults_segv_maperr)
{
	unsigned int i;

	for (i = 0; i < variant->guard_pages; i++) {
		char *low = self->a.base + i * PS;
		char *high = self->a.high_guard + i * PS;

		ASSERT_GUARD_FAULT(low, false);
		ASSERT_GUARD_FAULT(low + PS - 1, true);
		ASSERT_GUARD_FAULT(high, true);
		ASSERT_GUARD_FAULT(high + PS - 1, false);
	}
}

TEST_F(guarded, data_edges_are_accessible)
{
	ASSERT_ACCESS_OK(self->a.data, false);
	ASSERT_ACCESS_OK(self->a.data, true);
	ASSERT_ACCESS_OK(self->a.high_guard - 1, false);
	ASSERT_ACCESS_OK(self->a.high_guard - 1, true);
	ASSERT_ARENA_INTACT();
}

struct overrun {
	char *from;
	ssize_t step;		/* +1: run past the end, -1: before the start */
	size_t len;
};

/* A linear copy that runs one byte too far, as a buffer overflow would. */
static int overrun_child(void *arg)
{
	struct overrun *o = arg;
	struct sigaction sa = {
		.sa_sigaction = record_fault,
		.sa_flags = SA_SIGINFO | SA_RESETHAND,
	};
	volatile char *p = o->from;
	size_t i;

	sigaction(SIGSEGV, &sa, NULL);
	for (i = 0; i <= o->len; i++, p += o->step)
		*p = 0x77;
	return 0;
}

static int run_overrun(struct overrun *o, struct fault_report *rep)
{
	struct fault_report *shared;
	int sig, code = -1;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -1;
	memset(shared, 0, sizeof(*shared));
	*fault_report_slot() = shared;
	sig = child_fatal_signal(overrun_child, o, &code);
	*rep = *shared;
	rep->signal = sig;
	rep->exit_code = code;
	munmap(shared, sizeof(*shared));
	return 0;
}

TEST_F(guarded, linear_overrun_stops_at_the_guard)
{
	struct overrun up = {
		.from = self->a.data, .step = 1, .len = data_len(variant),
	};
	struct overrun down = {
		.from = self->a.high_guard - 1, .step = -1,
		.len = data_len(variant),
	};
	struct fault_report rep;

	ASSERT_EQ(0, run_overrun(&up, &rep));
	ASSERT_EQ(SIGSEGV, rep.signal);
	ASSERT_EQ(SEGV_MAPERR, rep.fault_code);
	ASSERT_EQ((void *)self->a.high_guard, rep.fault_addr);

	ASSERT_EQ(0, run_overrun(&down, &rep));
	ASSERT_EQ(SIGSEGV, rep.signal);
	ASSERT_EQ(SEGV_MAPERR, rep.fault_code);
	ASSERT_EQ((void *)(self->a.data - 1), rep.fault_addr);
	/* The children wrote their own copies (FORK_PRIVATE), not ours. */
	ASSERT_ARENA_INTACT();
}

/* ---- mprotect -------------------------------------------------------- */

TEST_F(guarded, mprotect_of_part_einval)
{
	const struct { size_t off, len; } parts[] = {
		{ 0, PS },					/* one guard */
		{ 0, guard_len(variant) },			/* low guard */
		{ guard_len(variant), PS },			/* one data page */
		{ guard_len(variant), data_len(variant) },	/* the data */
		{ guard_len(variant) + data_len(variant), guard_len(variant) },
		{ 0, self->a.len - PS },			/* all but the end */
		{ PS, self->a.len - PS },			/* all but the start */
	};
	/* PROT_READ | PROT_WRITE on part would change nothing: no split. */
	const int prots[] = { PROT_NONE, PROT_READ, PROT_WRITE };
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		for (j = 0; j < ARRAY_SIZE(prots); j++) {
			ASSERT_EQ(-1, mprotect(self->a.base + parts[i].off,
					       parts[i].len, prots[j])) {
				TH_LOG("part %zu prot %d", i, prots[j]);
			}
			ASSERT_EQ(EINVAL, errno) {
				TH_LOG("part %zu prot %d", i, prots[j]);
			}
		}
	}
	/* Still writable everywhere in the data. */
	fill_with_secret(self->a.data, data_len(variant), self->secret);
	ASSERT_ARENA_INTACT();
}

TEST_F(guarded, mprotect_of_whole_read_write_keeps_guards)
{
	ASSERT_EQ(0, mprotect(self->a.base, self->a.len, PROT_READ | PROT_WRITE));
	ASSERT_GUARD_FAULT(self->a.base, false);
	ASSERT_GUARD_FAULT(self->a.data - 1, true);
	ASSERT_GUARD_FAULT(self->a.high_guard, false);
	ASSERT_GUARD_FAULT(self->a.base + self->a.len - 1, true);
	ASSERT_ACCESS_OK(self->a.data, true);
	ASSERT_ARENA_INTACT();
}

TEST_F(guarded, mprotect_exec_eacces)
{
	const int prots[] = {
		PROT_EXEC, PROT_READ | PROT_EXEC,
		PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prots); i++) {
		ASSERT_EQ(-1, mprotect(self->a.base, self->a.len, prots[i]));
		ASSERT_EQ(EACCES, errno);
	}
	ASSERT_ARENA_INTACT();
}

/* ---- munmap ---------------------------------------------------------- */

TEST_F(guarded, munmap_of_part_einval)
{
	const struct { size_t off, len; } parts[] = {
		{ 0, PS },
		{ 0, guard_len(variant) },
		{ guard_len(variant), PS },
		{ guard_len(variant), data_len(variant) },
		{ guard_len(variant) + data_len(variant) - PS, PS },
		{ guard_len(variant) + data_len(variant), guard_len(variant) },
		{ self->a.len - PS, PS },
		{ PS, self->a.len - PS },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		ASSERT_EQ(-1, munmap(self->a.base + parts[i].off, parts[i].len)) {
			TH_LOG("part %zu", i);
		}
		ASSERT_EQ(EINVAL, errno);
	}
	ASSERT_EQ(1, maps_contain(0, SECARENA_DEVICE_PATH));
	ASSERT_ARENA_INTACT();
}

TEST_F(guarded, munmap_of_whole_frees_the_pages)
{
	struct secarena_info info;

	ASSERT_EQ(0, arena_unmap(&self->a));
	ASSERT_EQ(self->vm_pin, vm_pin_kb(0));
	ASSERT_EQ(self->pages_in_use, secarena_counter("pages_in_use"));
	ASSERT_EQ(0, maps_contain(0, SECARENA_DEVICE_PATH));
	ASSERT_EQ(0, secarena_get_info(self->a.fd, &info));
	ASSERT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_SPENT, info.flags);
	ASSERT_EQ(0U, info.data_pages);
}

/* ---- mmap MAP_FIXED over the arena ----------------------------------- */

TEST_F(guarded, map_fixed_over_part_fails)
{
	const struct { size_t off, len; } parts[] = {
		{ 0, PS },					/* a guard page */
		{ guard_len(variant), PS },			/* a data page */
		{ guard_len(variant) - PS, 2 * PS },		/* guard + data */
		{ self->a.len - PS, PS },			/* the last guard */
	};
	const int kinds[] = {
		MAP_PRIVATE | MAP_ANONYMOUS, MAP_SHARED | MAP_ANONYMOUS,
	};
	size_t i, j;
	void *p;

	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		for (j = 0; j < ARRAY_SIZE(kinds); j++) {
			p = mmap(self->a.base + parts[i].off, parts[i].len,
				 PROT_READ | PROT_WRITE, kinds[j] | MAP_FIXED,
				 -1, 0);
			ASSERT_EQ(MAP_FAILED, p) {
				TH_LOG("part %zu kind %#x", i, kinds[j]);
			}
			/*
			 * Before 6.12 mmap_region() reports its failed munmap
			 * of the old range as ENOMEM; from 6.12 the split
			 * refusal (may_split) comes through as EINVAL.
			 */
			ASSERT_EQ(kernel_at_least(6, 12) ? EINVAL : ENOMEM,
				  errno) {
				TH_LOG("part %zu kind %#x", i, kinds[j]);
			}
		}
	}
	ASSERT_EQ(1, maps_contain(0, SECARENA_DEVICE_PATH));
	ASSERT_ARENA_INTACT();
	ASSERT_GUARD_FAULT(self->a.base, true);
}

/* ---- mremap ----------------------------------------------------------- */

TEST_F(guarded, mremap_grow_efault)
{
	ASSERT_EQ(MAP_FAILED, mremap(self->a.base, self->a.len,
				     self->a.len + PS, 0));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(MAP_FAILED, mremap(self->a.base, self->a.len,
				     self->a.len + 16 * PS, MREMAP_MAYMOVE));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_ARENA_INTACT();
}

TEST_F(guarded, mremap_shrink_einval)
{
	ASSERT_EQ(MAP_FAILED, mremap(self->a.base, self->a.len,
				     self->a.len - PS, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(MAP_FAILED, mremap(self->a.base, self->a.len, PS,
				     MREMAP_MAYMOVE));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_ARENA_INTACT();
}

TEST_F(guarded, mremap_move_einval)
{
	char *target;

	target = mmap(NULL, self->a.len, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, target);
	ASSERT_EQ(MAP_FAILED, mremap(self->a.base, self->a.len, self->a.len,
				     MREMAP_MAYMOVE | MREMAP_FIXED, target));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(1, maps_contain(0, SECARENA_DEVICE_PATH));
	ASSERT_ARENA_INTACT();
	munmap(target, self->a.len);
}

/* ---- madvise ---------------------------------------------------------- */

TEST_F(guarded, madvise_dump_and_fork_advice_einval)
{
	const int advice[] = { MADV_DODUMP, MADV_DOFORK, MADV_WIPEONFORK };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(advice); i++) {
		ASSERT_EQ(-1, madvise(self->a.base, self->a.len, advice[i])) {
			TH_LOG("advice %d", advice[i]);
		}
		ASSERT_EQ(EINVAL, errno) {
			TH_LOG("advice %d", advice[i]);
		}
		ASSERT_EQ(-1, madvise(self->a.data, PS, advice[i]));
		ASSERT_EQ(EINVAL, errno);
	}
	ASSERT_ARENA_INTACT();
}

/*
 * MADV_DONTNEED would drop the data PTEs; the vma is VM_PFNMAP, which
 * madvise refuses for it before anything is zapped.
 */
TEST_F(guarded, madvise_dontneed_einval)
{
	size_t i;

	ASSERT_EQ(-1, madvise(self->a.base, self->a.len, MADV_DONTNEED));
	ASSERT_EQ(EINVAL, errno);
	for (i = 0; i < variant->data_pages; i++) {
		ASSERT_EQ(-1, madvise(self->a.data + i * PS, PS,
				      MADV_DONTNEED)) {
			TH_LOG("data page %zu", i);
		}
		ASSERT_EQ(EINVAL, errno) {
			TH_LOG("data page %zu", i);
		}
	}
	ASSERT_ARENA_INTACT();
}

TEST_F(guarded, madvise_keeponfork_allowed)
{
	ASSERT_EQ(0, madvise(self->a.base, self->a.len, MADV_KEEPONFORK));
	ASSERT_ARENA_INTACT();
}

/* ---- /proc/PID/pagemap ---------------------------------------------- */

/*
 * pagemap must not tell even root where the data lives. An ordinary page
 * of this process is the control: it shows as present, and with its PFN
 * as root.
 */
TEST_F(guarded, pagemap_hides_the_data)
{
	uint64_t ent;
	char *control;
	size_t i;

	control = mmap(NULL, PS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, control);
	control[0] = 1;
	ASSERT_EQ(0, pagemap_entry(0, control, &ent));
	munmap(control, PS);
	ASSERT_NE(0ULL, ent & PAGEMAP_PRESENT);
	if (geteuid() == 0)
		ASSERT_NE(0ULL, ent & PAGEMAP_PFN_MASK);

	for (i = 0; i < variant->data_pages; i++) {
		ASSERT_EQ(0, pagemap_entry(0, self->a.data + i * PS, &ent));
		ASSERT_EQ(0ULL, ent & (PAGEMAP_PRESENT | PAGEMAP_SWAPPED |
				       PAGEMAP_PFN_MASK)) {
			TH_LOG("data page %zu: %#llx", i,
			       (unsigned long long)ent);
		}
	}
	ASSERT_ARENA_INTACT();
}

/* ---- never executable ------------------------------------------------- */

TEST(mmap_prot_exec_of_dev_node_eperm)
{
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, 3 * PS, PROT_READ | PROT_EXEC,
				   MAP_SHARED, fd, 0));
	ASSERT_EQ(EPERM, errno);
	close(fd);
}

/*
 * /dev may be noexec, in which case the VFS refuses PROT_EXEC itself; a
 * node on a tmpfs that allows exec makes the driver decide.
 */
TEST(mmap_prot_exec_on_exec_mount_eperm)
{
	const char *node = "/tmp/secarena-exec-node";
	const int prots[] = {
		PROT_EXEC, PROT_READ | PROT_EXEC,
		PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	struct secarena_info info;
	unsigned int maj, min;
	struct statvfs sv;
	struct arena a;
	char buf[64];
	size_t i;
	int err, fd;

	ASSERT_LT(0, read_text_file(SECARENA_SYSFS_DIR "/dev", buf,
				    sizeof(buf)));
	ASSERT_EQ(2, sscanf(buf, "%u:%u", &maj, &min));
	err = private_tmpfs_at("/tmp");
	if (err == EPERM)
		SKIP(return, "mounting a tmpfs needs CAP_SYS_ADMIN");
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, statvfs("/tmp", &sv));
	ASSERT_EQ(0UL, sv.f_flag & ST_NOEXEC);
	ASSERT_EQ(0, mknod(node, S_IFCHR | 0600, makedev(maj, min)));

	for (i = 0; i < ARRAY_SIZE(prots); i++) {
		fd = open(node, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		ASSERT_EQ(MAP_FAILED, mmap(NULL, 3 * PS, prots[i], MAP_SHARED,
					   fd, 0)) {
			TH_LOG("prot %#x", prots[i]);
		}
		ASSERT_EQ(EPERM, errno) {
			TH_LOG("prot %#x", prots[i]);
		}
		ASSERT_EQ(0, secarena_get_info(fd, &info));
		ASSERT_EQ(0U, info.flags);
		close(fd);
	}

	/* The node is the real device: it maps read-write. */
	fd = open(node, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, arena_map_fd(&a, fd, 1, 1));
	a.data[0] = 1;
	ASSERT_EQ(-1, mprotect(a.base, a.len, PROT_READ | PROT_EXEC));
	ASSERT_EQ(EACCES, errno);
	arena_destroy(&a);
	ASSERT_EQ(0, unlink(node));
	ASSERT_EQ(0, umount("/tmp"));
}

TEST_HARNESS_MAIN
