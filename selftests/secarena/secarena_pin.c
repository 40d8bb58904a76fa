// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: no kernel path may keep a reference to an arena's data pages
 * after the system call that met them. Each interface that takes such a
 * reference (a pin) on user memory is pointed at arena data: vmsplice()
 * into a pipe, O_DIRECT reads and writes of a loop device, the same
 * through Linux AIO, io_uring fixed buffers and MSG_ZEROCOPY sends over
 * TCP. Each must fail with EFAULT and leave nothing behind: the pipe, the
 * device, the socket and the arena hold what they held before. Each comes
 * with a control showing that the same path pins ordinary memory.
 * (/proc/PID/mem, ptrace and process_vm_readv are in secarena_foreign.c.)
 */
/*
 * 6.1's kselftest_harness.h leaves parameters unused in code it expands
 * (TEST() wrappers, its SIGALRM handler); -Wextra would flag them here.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#include <linux/aio_abi.h>
#include <linux/errqueue.h>
#include <linux/io_uring.h>
#include <linux/loop.h>

#include "secarena_helpers.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif

#define PS		page_size()
#define ARENA_PAGES	2

/* A loop device over a file of this size, filled with LOOP_FILL. */
#define LOOP_PAGES	16
#define LOOP_FILL	0x3c
#define LOOP_DIR	"/tmp"
#define LOOP_FILE	LOOP_DIR "/secarena-pin.img"

/* Bounds on waiting, in milliseconds: the VM runs under TCG. */
#define COMPLETION_WAIT_MS	5000
#define QUIET_WAIT_MS		200

/* A page of ordinary memory, aligned for O_DIRECT, filled with byte. */
static char *aligned_page(int byte)
{
	void *p;

	if (posix_memalign(&p, PS, PS))
		return NULL;
	memset(p, byte, PS);
	return p;
}

static bool all_bytes(const void *buf, size_t len, int byte)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)byte)
			return false;
	return true;
}

/* ---- vmsplice() ---------------------------------------------------------- */

FIXTURE(vmsplice) {
	struct arena a;
	unsigned char secret[SECRET_LEN];
	int pipe[2];
	char *buf;
};

/* pages: that many whole pages from the start; else offset and len bytes. */
FIXTURE_VARIANT(vmsplice) {
	size_t pages;
	size_t offset;
	size_t len;
};

FIXTURE_VARIANT_ADD(vmsplice, one_page) { .pages = 1 };
FIXTURE_VARIANT_ADD(vmsplice, all_pages) { .pages = ARENA_PAGES };
FIXTURE_VARIANT_ADD(vmsplice, sub_range) { .offset = 100, .len = 200 };

FIXTURE_SETUP(vmsplice)
{
	ASSERT_EQ(0, random_secret(self->secret));
	ASSERT_EQ(0, arena_create(&self->a, ARENA_PAGES, 1,
				  SECARENA_FORK_PRIVATE));
	fill_with_secret(self->a.data, ARENA_PAGES * PS, self->secret);
	/* Non-blocking: an empty pipe reads as EAGAIN. */
	ASSERT_EQ(0, pipe2(self->pipe, O_CLOEXEC | O_NONBLOCK));
	self->buf = malloc(ARENA_PAGES * PS);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(vmsplice)
{
	free(self->buf);
	close(self->pipe[0]);
	close(self->pipe[1]);
	arena_destroy(&self->a);
}

TEST_F(vmsplice, arena_data_efault)
{
	size_t off = variant->pages ? 0 : variant->offset;
	size_t len = variant->pages ? variant->pages * PS : variant->len;
	struct iovec iov = { .iov_base = self->buf, .iov_len = len };
	ssize_t spliced, queued;
	int err, read_err;

	/* Control: as many bytes of ordinary memory go into the pipe. */
	memset(self->buf, 0x71, len);
	ASSERT_EQ((ssize_t)len, vmsplice(self->pipe[1], &iov, 1, 0));
	ASSERT_EQ((ssize_t)len, read(self->pipe[0], self->buf, len));
	ASSERT_TRUE(all_bytes(self->buf, len, 0x71));

	iov.iov_base = self->a.data + off;
	spliced = vmsplice(self->pipe[1], &iov, 1, 0);
	err = errno;
	queued = read(self->pipe[0], self->buf, len);
	read_err = errno;
	ASSERT_EQ(-1, spliced) {
		TH_LOG("vmsplice took %zd bytes of arena data; the pipe gave %zd bytes%s",
		       spliced, queued,
		       queued > 0 && contains_secret(self->buf, queued,
						     self->secret) ?
		       ", the secret among them" : "");
	}
	ASSERT_EQ(EFAULT, err);
	/* Nothing of the arena was queued, not even a partial page. */
	ASSERT_EQ(-1, queued);
	ASSERT_EQ(EAGAIN, read_err);
	ASSERT_TRUE(tiled_with_secret(self->a.data, ARENA_PAGES * PS,
				      self->secret));
}

/* ---- a loop device, O_DIRECT --------------------------------------------- */

FIXTURE(loopdev) {
	struct arena a;
	unsigned char secret[SECRET_LEN];
	char *buf;		/* ordinary, aligned for O_DIRECT */
	int loop;		/* the configured device, O_RDWR */
	int dio;		/* the same device, O_RDWR | O_DIRECT */
};

/* The backing file, LOOP_PAGES copies of page: 0 and its fd in *fd, or errno. */
static int make_backing_file(const char *page, int *fd)
{
	int i, err;

	*fd = open(LOOP_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (*fd < 0)
		return errno;
	for (i = 0; i < LOOP_PAGES; i++) {
		if (write_full(*fd, page, PS)) {
			err = errno;
			close(*fd);
			return err;
		}
	}
	return 0;
}

/*
 * Attach backing to a free loop device, detached again on its last close
 * however the test ends: 0 and the device open O_RDWR in *loop, or errno.
 */
static int loop_attach(int backing, int *loop)
{
	struct loop_config cfg = {
		.fd = backing,
		.info.lo_flags = LO_FLAGS_AUTOCLEAR,
	};
	char path[32];
	int ctl, nr, tries, err = EBUSY;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return errno;
	/* Another process may take the free device first. */
	for (tries = 0; tries < 8 && err == EBUSY; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			err = errno;
			break;
		}
		snprintf(path, sizeof(path), "/dev/loop%d", nr);
		*loop = open(path, O_RDWR | O_CLOEXEC);
		if (*loop < 0) {
			err = errno;
			break;
		}
		if (!ioctl(*loop, LOOP_CONFIGURE, &cfg)) {
			err = 0;
			break;
		}
		err = errno;
		close(*loop);
	}
	close(ctl);
	return err;
}

/* The path of the loop device open at fd, into path. */
static int loop_path(int fd, char *path, size_t size)
{
	struct stat st;

	if (fstat(fd, &st))
		return errno;
	snprintf(path, size, "/dev/loop%u", minor(st.st_rdev));
	return 0;
}

FIXTURE_SETUP(loopdev)
{
	char path[32];
	int backing;

	self->loop = -1;
	self->dio = -1;
	if (geteuid() != 0)
		SKIP(return, "loop devices need root");
	if (access("/dev/loop-control", F_OK)) {
		ASSERT_NE(-1, system("modprobe loop 2>/dev/null"));
		if (access("/dev/loop-control", F_OK))
			SKIP(return, "no /dev/loop-control, modprobe loop failed");
	}
	ASSERT_EQ(0, random_secret(self->secret));
	ASSERT_EQ(0, arena_create(&self->a, ARENA_PAGES, 1,
				  SECARENA_FORK_PRIVATE));
	fill_with_secret(self->a.data, ARENA_PAGES * PS, self->secret);
	self->buf = aligned_page(LOOP_FILL);
	ASSERT_NE(NULL, self->buf);

	/* The image lives in a tmpfs of this test's own mount namespace. */
	ASSERT_EQ(0, private_tmpfs_at(LOOP_DIR));
	ASSERT_EQ(0, make_backing_file(self->buf, &backing));
	ASSERT_EQ(0, loop_attach(backing, &self->loop));
	close(backing);
	ASSERT_EQ(0, loop_path(self->loop, path, sizeof(path)));
	self->dio = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	ASSERT_LE(0, self->dio);
}

FIXTURE_TEARDOWN(loopdev)
{
	if (self->dio >= 0)
		close(self->dio);
	if (self->loop >= 0) {
		EXPECT_EQ(0, ioctl(self->loop, LOOP_CLR_FD));
		close(self->loop);
	}
	free(self->buf);
	arena_destroy(&self->a);
}

TEST_F(loopdev, o_direct_pwrite_from_arena_efault)
{
	ssize_t n;
	int err;

	/* Control: O_DIRECT works on this device, from ordinary memory. */
	memset(self->buf, 0x52, PS);
	ASSERT_EQ((ssize_t)PS, pwrite(self->dio, self->buf, PS, 0));
	memset(self->buf, 0, PS);
	ASSERT_EQ((ssize_t)PS, pread(self->dio, self->buf, PS, 0));
	ASSERT_TRUE(all_bytes(self->buf, PS, 0x52));

	n = pwrite(self->dio, self->a.data, PS, PS);
	err = errno;
	/* The device still holds what the image was made with. */
	ASSERT_EQ((ssize_t)PS, pread(self->dio, self->buf, PS, PS));
	ASSERT_EQ(-1, n) {
		TH_LOG("O_DIRECT wrote %zd bytes of arena data%s", n,
		       contains_secret(self->buf, PS, self->secret) ?
		       ", the secret is on the device" : "");
	}
	ASSERT_EQ(EFAULT, err);
	ASSERT_TRUE(all_bytes(self->buf, PS, LOOP_FILL));

	n = pwrite(self->dio, self->a.data + PS, PS, 2 * PS);
	err = errno;
	ASSERT_EQ(-1, n);
	ASSERT_EQ(EFAULT, err);
	ASSERT_EQ((ssize_t)PS, pread(self->dio, self->buf, PS, 2 * PS));
	ASSERT_TRUE(all_bytes(self->buf, PS, LOOP_FILL));
	ASSERT_TRUE(tiled_with_secret(self->a.data, ARENA_PAGES * PS,
				      self->secret));
}

TEST_F(loopdev, o_direct_pread_into_arena_efault)
{
	ssize_t n;
	int err;

	/* Control: O_DIRECT works on this device, into ordinary memory. */
	ASSERT_EQ((ssize_t)PS, pread(self->dio, self->buf, PS, 0));
	ASSERT_TRUE(all_bytes(self->buf, PS, LOOP_FILL));

	n = pread(self->dio, self->a.data, PS, 0);
	err = errno;
	ASSERT_EQ(-1, n);
	ASSERT_EQ(EFAULT, err);
	n = pread(self->dio, self->a.data, ARENA_PAGES * PS, 0);
	err = errno;
	ASSERT_EQ(-1, n);
	ASSERT_EQ(EFAULT, err);
	ASSERT_TRUE(tiled_with_secret(self->a.data, ARENA_PAGES * PS,
				      self->secret));
}

/* ---- the same through Linux AIO -------------------------------------------- */

struct aio_outcome {
	long submitted;		/* io_submit(): 1, or -errno */
	long long res;		/* the completion's res, if submitted */
};

/*
 * One IOCB_CMD_PREAD or IOCB_CMD_PWRITE of len bytes at off, waited for:
 * 0 with *out filled, or -1 if the context or the wait failed.
 */
static int aio_rw_once(int fd, unsigned int opcode, void *buf, size_t len,
		       off_t off, struct aio_outcome *out)
{
	struct timespec wait = { .tv_sec = COMPLETION_WAIT_MS / 1000 };
	struct iocb cb = {
		.aio_lio_opcode = opcode,
		.aio_fildes = fd,
		.aio_buf = (uintptr_t)buf,
		.aio_nbytes = len,
		.aio_offset = off,
	};
	struct iocb *cbs[1] = { &cb };
	aio_context_t ctx = 0;
	struct io_event ev;
	int ret = 0;
	long n;

	if (syscall(SYS_io_setup, 1, &ctx))
		return -1;
	out->res = 0;
	n = syscall(SYS_io_submit, ctx, 1, cbs);
	out->submitted = n < 0 ? -errno : n;
	if (n == 1) {
		if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, &wait) == 1)
			out->res = ev.res;
		else
			ret = -1;
	}
	syscall(SYS_io_destroy, ctx);
	return ret;
}

TEST_F(loopdev, aio_pread_into_arena_efault)
{
	struct aio_outcome out;

	/* Control: an ordinary aligned page is read. */
	ASSERT_EQ(0, aio_rw_once(self->dio, IOCB_CMD_PREAD, self->buf, PS, 0,
				 &out));
	ASSERT_EQ(1, out.submitted);
	ASSERT_EQ((long long)PS, out.res);
	ASSERT_TRUE(all_bytes(self->buf, PS, LOOP_FILL));

	/* Submitted, then completed with -EFAULT. */
	ASSERT_EQ(0, aio_rw_once(self->dio, IOCB_CMD_PREAD, self->a.data, PS,
				 0, &out));
	ASSERT_EQ(1, out.submitted);
	ASSERT_EQ(-EFAULT, out.res);
	ASSERT_TRUE(tiled_with_secret(self->a.data, ARENA_PAGES * PS,
				      self->secret));
}

TEST_F(loopdev, aio_pwrite_from_arena_efault)
{
	struct aio_outcome out;

	/* Control: an ordinary aligned page is written. */
	memset(self->buf, 0x52, PS);
	ASSERT_EQ(0, aio_rw_once(self->dio, IOCB_CMD_PWRITE, self->buf, PS, 0,
				 &out));
	ASSERT_EQ(1, out.submitted);
	ASSERT_EQ((long long)PS, out.res);
	ASSERT_EQ((ssize_t)PS, pread(self->dio, self->buf, PS, 0));
	ASSERT_TRUE(all_bytes(self->buf, PS, 0x52));

	ASSERT_EQ(0, aio_rw_once(self->dio, IOCB_CMD_PWRITE, self->a.data, PS,
				 PS, &out));
	ASSERT_EQ(1, out.submitted);
	ASSERT_EQ(-EFAULT, out.res);
	ASSERT_EQ((ssize_t)PS, pread(self->dio, self->buf, PS, PS));
	ASSERT_TRUE(all_bytes(self->buf, PS, LOOP_FILL));
}

/* ---- io_uring fixed buffers ---------------------------------------------- */

static int io_uring_register_buffers(int ring, const struct iovec *iov,
				     unsigned int nr)
{
	return syscall(SYS_io_uring_register, ring, IORING_REGISTER_BUFFERS,
		       iov, nr);
}

static int io_uring_unregister_buffers(int ring)
{
	return syscall(SYS_io_uring_register, ring, IORING_UNREGISTER_BUFFERS,
		       NULL, 0);
}

TEST(io_uring_register_buffers_efault)
{
	unsigned char secret[SECRET_LEN];
	struct io_uring_params params;
	struct iovec iov[2];
	struct arena a;
	char *buf;
	int ring;

	memset(&params, 0, sizeof(params));
	ring = syscall(SYS_io_uring_setup, 4, &params);
	if (ring < 0 && (errno == ENOSYS || errno == EPERM))
		SKIP(return, "io_uring_setup: %s (io_uring disabled)",
		     strerror(errno));
	ASSERT_LE(0, ring);
	ASSERT_EQ(0, random_secret(secret));
	ASSERT_EQ(0, arena_create(&a, ARENA_PAGES, 1, SECARENA_FORK_PRIVATE));
	fill_with_secret(a.data, ARENA_PAGES * PS, secret);
	buf = aligned_page(0x66);
	ASSERT_NE(NULL, buf);

	/* Control: ordinary memory registers, and unregisters. */
	iov[0] = (struct iovec){ .iov_base = buf, .iov_len = PS };
	ASSERT_EQ(0, io_uring_register_buffers(ring, iov, 1));
	ASSERT_EQ(0, io_uring_unregister_buffers(ring));

	iov[0] = (struct iovec){ .iov_base = a.data, .iov_len = PS };
	ASSERT_EQ(-1, io_uring_register_buffers(ring, iov, 1));
	ASSERT_EQ(EFAULT, errno);
	iov[0] = (struct iovec){ .iov_base = a.data + 100, .iov_len = 200 };
	ASSERT_EQ(-1, io_uring_register_buffers(ring, iov, 1));
	ASSERT_EQ(EFAULT, errno);
	/* An ordinary buffer first: its pin is undone with the whole table. */
	iov[0] = (struct iovec){ .iov_base = buf, .iov_len = PS };
	iov[1] = (struct iovec){ .iov_base = a.data, .iov_len = ARENA_PAGES * PS };
	ASSERT_EQ(-1, io_uring_register_buffers(ring, iov, 2));
	ASSERT_EQ(EFAULT, errno);
	/* No table was left behind: unregister finds none, register works. */
	ASSERT_EQ(-1, io_uring_unregister_buffers(ring));
	ASSERT_EQ(ENXIO, errno);
	ASSERT_EQ(0, io_uring_register_buffers(ring, iov, 1));
	ASSERT_EQ(0, io_uring_unregister_buffers(ring));

	ASSERT_TRUE(tiled_with_secret(a.data, ARENA_PAGES * PS, secret));
	close(ring);
	free(buf);
	arena_destroy(&a);
}

/* ---- MSG_ZEROCOPY over TCP on loopback ----------------------------------- */

FIXTURE(zerocopy) {
	struct arena a;
	unsigned char secret[SECRET_LEN];
	char *buf;
	int client;		/* SO_ZEROCOPY */
	int server;
};

/* A connected TCP pair on 127.0.0.1: 0, or errno. */
static int tcp_loopback_pair(int *client, int *server)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t alen = sizeof(addr);
	int lsn, err = 0;

	*client = -1;
	*server = -1;
	lsn = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsn < 0)
		return errno;
	if (bind(lsn, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lsn, 1) ||
	    getsockname(lsn, (struct sockaddr *)&addr, &alen)) {
		err = errno;
		goto out;
	}
	*client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*client < 0 ||
	    connect(*client, (struct sockaddr *)&addr, sizeof(addr))) {
		err = errno;
		goto out;
	}
	*server = accept4(lsn, NULL, NULL, SOCK_CLOEXEC);
	if (*server < 0)
		err = errno;
out:
	close(lsn);
	return err;
}

/*
 * Send ids the kernel is done with. (Over loopback its code is always
 * SO_EE_CODE_ZEROCOPY_COPIED: delivery copies the pinned pages.)
 */
struct zc_completion {
	uint32_t lo, hi;
};

/*
 * The next MSG_ZEROCOPY completion on sock's error queue, waiting up to
 * ms: 0 with *c filled; -ETIME if none came; -EPROTO if something else
 * was queued; another -errno.
 */
static int zc_completion(int sock, int ms, struct zc_completion *c)
{
	char control[CMSG_SPACE(sizeof(struct sock_extended_err))];
	struct msghdr msg = {
		.msg_control = control,
		.msg_controllen = sizeof(control),
	};
	struct pollfd pfd = { .fd = sock };
	struct sock_extended_err *ee;
	struct cmsghdr *cm;
	int n;

	n = poll(&pfd, 1, ms);
	if (n < 0)
		return -errno;
	if (!(pfd.revents & POLLERR))
		return -ETIME;
	if (recvmsg(sock, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return -errno;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_level != SOL_IP || cm->cmsg_type != IP_RECVERR)
		return -EPROTO;
	ee = (struct sock_extended_err *)CMSG_DATA(cm);
	if (ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee->ee_errno)
		return -EPROTO;
	c->lo = ee->ee_info;
	c->hi = ee->ee_data;
	return 0;
}

/* Whether sock has bytes to read within ms: 1, 0, or -errno. */
static int readable_within(int sock, int ms)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	int n = poll(&pfd, 1, ms);

	return n < 0 ? -errno : n > 0 && (pfd.revents & POLLIN);
}

FIXTURE_SETUP(zerocopy)
{
	int one = 1;

	self->client = -1;
	self->server = -1;
	ASSERT_EQ(0, random_secret(self->secret));
	ASSERT_EQ(0, arena_create(&self->a, ARENA_PAGES, 1,
				  SECARENA_FORK_PRIVATE));
	fill_with_secret(self->a.data, ARENA_PAGES * PS, self->secret);
	self->buf = aligned_page(0x7a);
	ASSERT_NE(NULL, self->buf);
	ASSERT_EQ(0, tcp_loopback_pair(&self->client, &self->server));
	ASSERT_EQ(0, setsockopt(self->client, SOL_SOCKET, SO_ZEROCOPY, &one,
				sizeof(one)));
	ASSERT_EQ(0, setsockopt(self->client, IPPROTO_TCP, TCP_NODELAY, &one,
				sizeof(one)));
}

FIXTURE_TEARDOWN(zerocopy)
{
	if (self->client >= 0)
		close(self->client);
	if (self->server >= 0)
		close(self->server);
	free(self->buf);
	arena_destroy(&self->a);
}

TEST_F(zerocopy, msg_zerocopy_send_efault)
{
	struct zc_completion c;
	char *rx = malloc(PS);
	ssize_t n, got;
	int err;

	ASSERT_NE(NULL, rx);
	/* Control: ordinary memory is sent and its completion is id 0. */
	ASSERT_EQ((ssize_t)PS, send(self->client, self->buf, PS, MSG_ZEROCOPY));
	ASSERT_EQ(0, read_full(self->server, rx, PS));
	ASSERT_TRUE(all_bytes(rx, PS, 0x7a));
	ASSERT_EQ(0, zc_completion(self->client, COMPLETION_WAIT_MS, &c));
	ASSERT_EQ(0U, c.lo);
	ASSERT_EQ(0U, c.hi);

	n = send(self->client, self->a.data, PS, MSG_ZEROCOPY);
	err = errno;
	got = readable_within(self->server, QUIET_WAIT_MS) == 1 ?
	      recv(self->server, rx, PS, MSG_DONTWAIT) : 0;
	ASSERT_EQ(-1, n) {
		TH_LOG("send took %zd bytes of arena data; the peer got %zd%s",
		       n, got, got > 0 && contains_secret(rx, got, self->secret) ?
		       ", the secret among them" : "");
	}
	ASSERT_EQ(EFAULT, err);
	ASSERT_EQ(0, got);
	/* No completion is owed for it: the pages were never held. */
	ASSERT_EQ(-ETIME, zc_completion(self->client, QUIET_WAIT_MS, &c));

	/* The next send takes id 1: the refused one used none. */
	ASSERT_EQ((ssize_t)PS, send(self->client, self->buf, PS, MSG_ZEROCOPY));
	ASSERT_EQ(0, read_full(self->server, rx, PS));
	ASSERT_TRUE(all_bytes(rx, PS, 0x7a));
	ASSERT_EQ(0, zc_completion(self->client, COMPLETION_WAIT_MS, &c));
	ASSERT_EQ(1U, c.lo);
	ASSERT_EQ(1U, c.hi);
	ASSERT_TRUE(tiled_with_secret(self->a.data, ARENA_PAGES * PS,
				      self->secret));
	free(rx);
}

TEST_HARNESS_MAIN
