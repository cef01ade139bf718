// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * test_c12_skew.c - part of memcg-flush-model (finding c12-lost-flush, race-free form).
 *
 * From v6.16, memcg_rstat_updated() leaves its ancestor walk with a break
 * at the first memcg already flushable ("all its ancestors are flushable
 * as well"). A child becomes flushable through one update of 16 pages (a
 * 64 KiB folio) on which its parent's per-CPU counter does not fold; then
 * every update of the child breaks at the child, and until the periodic
 * flush (2 s) the parent's memory.stat shows less anon than its child's.
 * On v6.8 to v6.15 (no break) the parent becomes flushable and shows all.
 * Root, cgroup v2; THP sysfs settings are changed and restored at exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define PASS 0
#define FAIL 1
#define SKIP 4

#define PAGE_SZ		4096UL
#define BLOCK_SZ	(2UL << 20)
#define FOLIO_SZ	(64UL << 10)
#define BLOCK_PAGES	(BLOCK_SZ / PAGE_SZ)
#define BLOCK_FOLIOS	(BLOCK_SZ / FOLIO_SZ)
#define MTHP_BLOCKS	2
#define CGROUP2_MAGIC	0x63677270
#define CG2_MNT		"/sys/fs/cgroup"
#define THP_DIR		"/sys/kernel/mm/transparent_hugepage"
#define THP_TOP		THP_DIR "/enabled"
#define THP_64K		THP_DIR "/hugepages-64kB/enabled"
#define THP_64K_FAULTS	THP_DIR "/hugepages-64kB/stats/anon_fault_alloc"

static const char *root = CG2_MNT;
static char saved_top[32], saved_64k[32];
static int fd_start = -1, fd_procs_a = -1, fd_procs_b = -1;
static int fd_stat_p = -1, fd_stat_a = -1, fd_faults = -1;
static char statbuf[65536];
static char *small, *mthp;		/* 2 MiB-aligned regions */
static long small_next, small_pages;
static long mthp_next;
static const char *const cgs[] = { "", "p", "p/a", "p/b" };
static int made[4];			/* cgs[i] was created by us */

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int write_text(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n = fd < 0 ? -1 : write(fd, s, strlen(s));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* The selected word of a sysfs choice file: "always [madvise] never". */
static int bracketed(const char *path, char *out, size_t len)
{
	char buf[256], *b, *e;

	if (read_text(path, buf, sizeof(buf)) || !(b = strchr(buf, '[')) ||
	    !(e = strchr(b, ']')) || (size_t)(e - b) > len)
		return -1;
	memcpy(out, b + 1, e - b - 1);
	out[e - b - 1] = '\0';
	return 0;
}

static void restore_thp(void)
{
	if (saved_64k[0] && write_text(THP_64K, saved_64k))
		fprintf(stderr, "could not restore %s to %s\n", THP_64K, saved_64k);
	if (saved_top[0] && write_text(THP_TOP, saved_top))
		fprintf(stderr, "could not restore %s to %s\n", THP_TOP, saved_top);
}

static char *cg_path(char *out, size_t len, const char *rel, const char *file)
{
	snprintf(out, len, "%s/c12%s%s%s%s", root, rel[0] ? "/" : "", rel,
		 file[0] ? "/" : "", file);
	return out;
}

static int cg_open(const char *rel, const char *file, int flags)
{
	char path[4096];

	return open(cg_path(path, sizeof(path), rel, file), flags);
}

/* Reread an open memory.stat (or counter) from offset 0: no allocation. */
static long reread(int fd, const char *key)
{
	size_t len = 0, klen = strlen(key);
	ssize_t n;
	char *line;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	while (len < sizeof(statbuf) - 1 &&
	       (n = read(fd, statbuf + len, sizeof(statbuf) - 1 - len)) > 0)
		len += n;
	statbuf[len] = '\0';
	if (!key[0])
		return strtol(statbuf, NULL, 10);
	for (line = statbuf; line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return strtol(line + klen + 1, NULL, 10);
	}
	return -1;
}

static int enter(int fd)
{
	return write(fd, "0", 1) == 1 ? 0 : -1;
}

static void touch_small(long n)
{
	while (n > 0 && small_next < small_pages) {
		/* The first page of each block is pre-touched: skip it. */
		if (small_next % BLOCK_PAGES) {
			*(volatile char *)(small + small_next * PAGE_SZ) = 1;
			n--;
		}
		small_next++;
	}
}

static void touch_folio(void)
{
	if (mthp_next % BLOCK_FOLIOS == 0)	/* extent 0 of a block: pre-touched */
		mthp_next++;
	*(volatile char *)(mthp + mthp_next++ * FOLIO_SZ) = 1;
}

static char *map_aligned(size_t len)
{
	char *p = mmap(NULL, len + BLOCK_SZ, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	return (char *)(((unsigned long)p + BLOCK_SZ - 1) & ~(BLOCK_SZ - 1));
}

static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char a[128 << 10];
	size_t i;

	for (i = 0; i < sizeof(a); i += PAGE_SZ)
		a[i] = 1;
}

static void usage(const char *prog)
{
	printf("usage: %s [-r DIR] [-k K1] [-b K2] [-n] [-h]\n"
	       "  -r DIR  cgroup v2 directory to create c12/ in [" CG2_MNT "]\n"
	       "  -k K1   4 KiB pages child a charges first [by online CPUs]\n"
	       "  -b K2   4 KiB pages sibling b charges [8]\n"
	       "  -n      print the plan only; -h this help. Exit: 0 PASS, 1 FAIL, 4 SKIP\n",
	       prog);
}

static void plan(long cpus, long k1, long k2, const char *k1_from)
{
	printf("plan: %ld online CPUs, k1 = %ld (%s), k2 = %ld; one task on CPU 0\n",
	       cpus, k1, k1_from, k2);
	printf("  cgroups %s/c12/p/{a,b}\n  %s -> always\n  %s: always -> madvise"
	       " (if it is always)\n", root, THP_64K, THP_TOP);
	printf("  p/b: wait 2.2 s for the periodic flush, then one 64 KiB folio\n"
	       "  p/a: %ld 4 KiB pages\n  p/b: %ld 4 KiB pages\n"
	       "  p/a: one 64 KiB folio, 4 4 KiB pages\n"
	       "  read p's memory.stat, then p/a's; FAIL if p's anon < a's\n", k1, k2);
	printf("  charged (pages): a = %ld, b = %ld, p = %ld\n  anonymous 64 KiB mTHP: %s\n",
	       k1 + 20, 16 + k2, k1 + 20 + 16 + k2, access(THP_64K, F_OK) ? "absent" : "present");
}

static int setup(long k1, long k2)
{
	char path[4096], buf[4096], mode[32], *line;
	struct statfs sfs;
	cpu_set_t set;
	long i;

	if (geteuid())
		return printf("SKIP: needs root\n"), SKIP;
	if (statfs(root, &sfs) || sfs.f_type != CGROUP2_MAGIC)
		return printf("SKIP: no cgroup2 at %s\n", root), SKIP;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	if (read_text(path, buf, sizeof(buf)) || !strstr(buf, "memory"))
		return printf("SKIP: memory controller not enabled in %s\n", path), SKIP;
	if (access(THP_64K, F_OK))
		return printf("SKIP: no %s (no anonymous mTHP)\n", THP_64K), SKIP;

	/* THP first: the touches below must already see the run's settings. */
	atexit(restore_thp);
	if (bracketed(THP_64K, saved_64k, sizeof(saved_64k)) || write_text(THP_64K, "always"))
		return saved_64k[0] = '\0', printf("SKIP: cannot set %s\n", THP_64K), SKIP;
	if (!bracketed(THP_TOP, mode, sizeof(mode)) && !strcmp(mode, "always")) {
		if (write_text(THP_TOP, "madvise"))
			return printf("SKIP: cannot set %s\n", THP_TOP), SKIP;
		strcpy(saved_top, mode);
	}

	/* All memory mapped, and its page tables made, in the starting cgroup. */
	small_pages = k1 + k2 + 16 + BLOCK_PAGES;
	small = map_aligned(small_pages * PAGE_SZ);
	mthp = map_aligned(MTHP_BLOCKS * BLOCK_SZ);
	if (!small || !mthp)
		return perror("mmap"), FAIL;
	if (madvise(small, small_pages * PAGE_SZ, MADV_NOHUGEPAGE))
		return perror("madvise"), FAIL;
	for (i = 0; i < small_pages; i += BLOCK_PAGES)
		small[i * PAGE_SZ] = 1;
	for (i = 0; i < MTHP_BLOCKS; i++)
		mthp[i * BLOCK_SZ] = 1;
	memset(statbuf, 0, sizeof(statbuf));
	prefault_stack();

	for (i = 0; i < 4; i++) {
		made[i] = !mkdir(cg_path(path, sizeof(path), cgs[i], ""), 0755);
		if (!made[i] && errno != EEXIST)
			return perror(path), FAIL;
	}
	for (i = 0; i < 2; i++)
		if (write_text(cg_path(path, sizeof(path), cgs[i], "cgroup.subtree_control"),
			       "+memory"))
			return perror(path), FAIL;

	if (read_text("/proc/self/cgroup", buf, sizeof(buf)) || !(line = strstr(buf, "0::")))
		return printf("FAIL: no cgroup v2 line in /proc/self/cgroup\n"), FAIL;
	line[strcspn(line, "\n")] = '\0';
	snprintf(path, sizeof(path), CG2_MNT "%s/cgroup.procs", strcmp(line + 3, "/") ? line + 3 : "");
	fd_start = open(path, O_WRONLY);
	fd_procs_a = cg_open("p/a", "cgroup.procs", O_WRONLY);
	fd_procs_b = cg_open("p/b", "cgroup.procs", O_WRONLY);
	fd_stat_p = cg_open("p", "memory.stat", O_RDONLY);
	fd_stat_a = cg_open("p/a", "memory.stat", O_RDONLY);
	fd_faults = open(THP_64K_FAULTS, O_RDONLY);	/* optional (v6.9 on) */
	if (fd_start < 0 || fd_procs_a < 0 || fd_procs_b < 0 || fd_stat_p < 0 || fd_stat_a < 0)
		return perror("open"), FAIL;
	/* First reads here: their seq_file buffers are allocated outside. */
	reread(fd_stat_p, "anon");
	reread(fd_stat_a, "anon");

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return perror("SKIP: sched_setaffinity to CPU 0"), SKIP;
	return PASS;
}

static int run(long k1, long k2)
{
	struct timespec wait = { 2, 200000000 };
	long anon_p, anon_a, faults0, faults1, a = k1 + 20, b = 16 + k2;
	struct utsname u;

	faults0 = fd_faults >= 0 ? reread(fd_faults, "") : -1;
	printf("in p/b: waiting 2.2 s for the periodic flush\n");
	if (enter(fd_procs_b))
		return perror("enter p/b"), FAIL;
	nanosleep(&wait, NULL);
	touch_folio();				/* b: 16 pages */
	if (enter(fd_procs_a))
		return perror("enter p/a"), FAIL;
	touch_small(k1);			/* a: k1 pages */
	if (enter(fd_procs_b))
		return perror("enter p/b"), FAIL;
	touch_small(k2);			/* b: k2 pages */
	if (enter(fd_procs_a))
		return perror("enter p/a"), FAIL;
	touch_folio();				/* a: 16 pages */
	touch_small(4);				/* a: 4 pages */
	anon_p = reread(fd_stat_p, "anon");
	anon_a = reread(fd_stat_a, "anon");
	faults1 = fd_faults >= 0 ? reread(fd_faults, "") : -1;
	if (anon_p < 0 || anon_a < 0)
		return printf("FAIL: no anon in memory.stat\n"), FAIL;
	anon_p /= PAGE_SZ, anon_a /= PAGE_SZ;
	uname(&u);
	printf("charged (pages): a = %ld, b = %ld, p = %ld\n", a, b, a + b);
	printf("memory.stat anon (pages): p = %ld, p/a = %ld\n", anon_p, anon_a);
	if (faults0 >= 0 && faults1 - faults0 < 2)
		printf("note: %ld 64 KiB folio faults, 2 expected: a fallback to 4 KiB pages "
		       "makes a PASS say nothing\n", faults1 - faults0);
	if (anon_p < anon_a) {
		printf("FAIL (%s): parent misses pages its flushable child shows: "
		       "the early break (v6.16 on)\n", u.release);
		return FAIL;
	}
	printf("PASS (%s): the parent shows at least what its child shows\n", u.release);
	return PASS;
}

static void cleanup(void)
{
	char path[4096];
	int i;

	if (fd_start >= 0 && enter(fd_start))
		perror("move back to the starting cgroup");
	for (i = 3; i >= 0; i--) {
		if (!made[i] || !rmdir(cg_path(path, sizeof(path), cgs[i], "")) ||
		    errno == ENOENT)
			continue;
		if (errno == EBUSY)
			printf("note: %s busy, left in place\n", path);
		else
			perror(path);
	}
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), k1, k2 = 8;
	static const long k1_table[] = { 0, 11, 33, 54, 75 };	/* the model's */
	int opt, only_plan = 0, in_table = cpus >= 1 && cpus <= 4, ret;
	const char *k1_from = in_table ? "the model's table" : "extrapolated as 21*N-9";

	k1 = in_table ? k1_table[cpus] : 21 * cpus - 9;
	while ((opt = getopt(argc, argv, "r:k:b:nh")) != -1) {
		switch (opt) {
		case 'r': root = optarg; break;
		case 'k': k1 = atol(optarg); k1_from = "-k"; break;
		case 'b': k2 = atol(optarg); break;
		case 'n': only_plan = 1; break;
		case 'h': usage(argv[0]); return PASS;
		default: usage(argv[0]); return FAIL;
		}
	}
	if (k1 < 0 || k2 < 0)
		return usage(argv[0]), FAIL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	plan(cpus, k1, k2, k1_from);
	if (only_plan)
		return PASS;
	ret = setup(k1, k2);
	if (ret == PASS)
		ret = run(k1, k2);
	cleanup();
	return ret;			/* restore_thp() runs at exit */
}
