// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * test_c12_skew.c - part of memcg-flush-model (finding c12-lost-flush, race-free form).
 *
 * From v6.16, memcg_rstat_updated() leaves its ancestor walk with a break
 * at the first memcg already flushable ("all its ancestors are flushable
 * as well"). A child becomes flushable through one update of 16 pages (a
 * 64 KiB folio) on which its parent's per-CPU counter does not fold; from
 * then on every update of the child breaks at the child, the parent never
 * becomes flushable, and its memory.stat misses the child's pages until the
 * periodic flush. On v6.8 to v6.15 (no break) the parent becomes flushable
 * and shows them.
 *
 * One task on CPU 0, after the periodic flush: child p/b one 64 KiB folio,
 * child p/a k1 4 KiB pages, p/b k2 pages, p/a a 64 KiB folio and 4 pages,
 * then p/a M more pages (256 per online CPU): FAIL if the parent's
 * memory.stat still shows less anon than the child's, with how many pages
 * it misses and for how long. k1 is the model's for this release and CPU
 * count (flushcheck, docs/real-kernels.md section 5), or -k.
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
#include <dirent.h>
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
#define MAX_SIZES	16
#define WAIT_S		30

/*
 * The model's k1 per release and online CPUs: the middle of the k1 values
 * for which flushcheck forecasts the loss with that release's updates
 * (`flushcheck kernels` passes the same value with -k; the test
 * `reproducer_table_is_the_models` keeps this table equal to the model's).
 */
static const struct {
	const char *release;
	long cpus, k1;
} k1_table[] = {
	/* BEGIN k1_table */
	{ "6.12", 1, 11 }, { "6.12", 2, 42 }, { "6.12", 3, 42 }, { "6.12", 4, 42 },
	{ "6.16", 1, 11 }, { "6.16", 2, 42 }, { "6.16", 3, 42 }, { "6.16", 4, 42 },
	{ "6.17", 1, 11 }, { "6.17", 2, 42 }, { "6.17", 3, 42 }, { "6.17", 4, 42 },
	{ "6.18", 1, 11 }, { "6.18", 2, 42 }, { "6.18", 3, 42 }, { "6.18", 4, 42 },
	{ "6.19", 1, 11 }, { "6.19", 2, 42 }, { "6.19", 3, 42 }, { "6.19", 4, 42 },
	{ "7.0", 1, 11 }, { "7.0", 2, 42 }, { "7.0", 3, 42 }, { "7.0", 4, 42 },
	{ "7.1", 1, 11 }, { "7.1", 2, 42 }, { "7.1", 3, 42 }, { "7.1", 4, 42 },
	{ "7.2", 1, 11 }, { "7.2", 2, 42 }, { "7.2", 3, 42 }, { "7.2", 4, 42 },
	{ "7.3", 1, 11 }, { "7.3", 2, 42 }, { "7.3", 3, 42 }, { "7.3", 4, 42 },
	/* END k1_table */
};

static const char *root = CG2_MNT;
static char saved_top[32];
static struct {
	char path[320];
	char mode[32];
} saved[MAX_SIZES];
static int nsaved;
static int fd_start = -1, fd_procs_a = -1, fd_procs_b = -1, fd_procs_w = -1;
static int fd_hold_p = -1, fd_hold_top = -1;
static int fd_stat_p = -1, fd_stat_a = -1, fd_stat_w = -1, fd_faults = -1;
static char statbuf[65536];
static char *small, *mthp, *cold;
static long small_next, small_pages;
static long mthp_next;
static const char *const cgs[] = { "", "p", "p/a", "p/b", "w" };
static int made[5];			/* cgs[i] was created by us */

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
	int i;

	for (i = 0; i < nsaved; i++)
		if (write_text(saved[i].path, saved[i].mode))
			fprintf(stderr, "could not restore %s to %s\n", saved[i].path,
				saved[i].mode);
	if (saved_top[0] && write_text(THP_TOP, saved_top))
		fprintf(stderr, "could not restore %s to %s\n", THP_TOP, saved_top);
}

/* Set one size's enabled file, remembering its mode for restore_thp(). */
static int set_size(const char *path, const char *mode)
{
	if (nsaved == MAX_SIZES)
		return -1;
	if (bracketed(path, saved[nsaved].mode, sizeof(saved[nsaved].mode)))
		return -1;
	snprintf(saved[nsaved].path, sizeof(saved[nsaved].path), "%s", path);
	nsaved++;
	return write_text(path, mode);
}

/*
 * 64 KiB folios on, every other anonymous mTHP size below the PMD size off
 * for the run (a size set to always would change what the faults
 * allocate); the PMD size and file-only sizes (no enabled file) untouched.
 */
static int setup_mthp(void)
{
	char path[sizeof(saved[0].path)], pmd[64], buf[32];
	struct dirent *e;
	DIR *d = opendir(THP_DIR);
	int ret = 0;

	if (!d)
		return -1;
	snprintf(pmd, sizeof(pmd), "hugepages-%lukB",
		 read_text(THP_DIR "/hpage_pmd_size", buf, sizeof(buf)) ? 2048UL :
		 strtoul(buf, NULL, 10) / 1024);
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "hugepages-", 10) || !strcmp(e->d_name, pmd))
			continue;
		snprintf(path, sizeof(path), THP_DIR "/%s/enabled", e->d_name);
		if (access(path, F_OK))
			continue;
		if (set_size(path, strcmp(e->d_name, "hugepages-64kB") ? "never" : "always"))
			ret = -1;
	}
	closedir(d);
	return ret;
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

static long anon_pages(int fd)
{
	long v = reread(fd, "anon");

	return v < 0 ? v : v / (long)PAGE_SZ;
}

static int enter(int fd)
{
	return write(fd, "0", 1) == 1 ? 0 : -1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
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

/*
 * lru_add_drain() on this CPU: madvise_cold() drains the CPU's LRU add
 * batch before it looks at the range, which holds no page.
 */
static void drain_lru(void)
{
	madvise(cold, PAGE_SZ, MADV_COLD);
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
	printf("usage: %s [-r DIR] [-k K1] [-b K2] [-m M] [-n] [-h]\n"
	       "  -r DIR  cgroup v2 directory to create c12/ in [" CG2_MNT "]\n"
	       "  -k K1   4 KiB pages child a charges first [the model's, by release and CPUs]\n"
	       "  -b K2   4 KiB pages sibling b charges [8]\n"
	       "  -m M    4 KiB pages a charges once flushable [256 per online CPU]\n"
	       "  -n      print the plan only; -h this help. Exit: 0 PASS, 1 FAIL, 4 SKIP\n",
	       prog);
}

/* The model's k1 for this release ("7.3.4+deb13-amd64" is 7.3) and CPUs. */
static long table_k1(const char *release, long cpus)
{
	char mm[16];
	size_t i, n = strspn(release, "0123456789.");
	const char *dot = memchr(release, '.', n);
	const char *end = dot ? memchr(dot + 1, '.', n - (dot + 1 - release)) : NULL;
	size_t len = end ? (size_t)(end - release) : n;

	if (len >= sizeof(mm))
		return -1;
	memcpy(mm, release, len);
	mm[len] = '\0';
	for (i = 0; i < sizeof(k1_table) / sizeof(k1_table[0]); i++)
		if (!strcmp(k1_table[i].release, mm) && k1_table[i].cpus == cpus)
			return k1_table[i].k1;
	return -1;
}

static void plan(long cpus, long k1, long k2, long m, const char *k1_from)
{
	printf("plan: %ld online CPUs, k1 = %ld (%s), k2 = %ld, m = %ld; one task on CPU 0\n",
	       cpus, k1, k1_from, k2, m);
	printf("  cgroups %s/c12/p/{a,b} and %s/c12/w\n"
	       "  hugepages-64kB/enabled -> always, every other size -> never; %s: always ->"
	       " madvise (if it is always)\n", root, root, THP_TOP);
	printf("  wait in p/b for the periodic flush (seen as w's one page in its memory.stat)\n"
	       "  p/b: one 64 KiB folio\n  p/a: %ld 4 KiB pages\n  p/b: %ld 4 KiB pages\n"
	       "  p/a: one 64 KiB folio, 4 4 KiB pages; read p\n"
	       "  p/a: %ld 4 KiB pages; read p, then p/a; FAIL if p's anon < a's\n", k1, k2, m);
	printf("  charged (pages): a = %ld, b = %ld, p = %ld\n  anonymous 64 KiB mTHP: %s\n",
	       k1 + 20 + m, 16 + k2, k1 + 20 + m + 16 + k2,
	       access(THP_64K, F_OK) ? "absent" : "present");
}

static int setup(long k1, long k2, long m)
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
	if (setup_mthp())
		return printf("SKIP: cannot set the mTHP sizes in %s\n", THP_DIR), SKIP;
	if (!bracketed(THP_TOP, mode, sizeof(mode)) && !strcmp(mode, "always")) {
		if (write_text(THP_TOP, "madvise"))
			return printf("SKIP: cannot set %s\n", THP_TOP), SKIP;
		strcpy(saved_top, mode);
	}

	/* All memory mapped, and its page tables made, in the starting cgroup. */
	small_pages = k1 + k2 + 4 + m + 1 + 2 * BLOCK_PAGES;
	small = map_aligned(small_pages * PAGE_SZ);
	mthp = map_aligned(MTHP_BLOCKS * BLOCK_SZ);
	cold = map_aligned(PAGE_SZ);
	if (!small || !mthp || !cold)
		return perror("mmap"), FAIL;
	if (madvise(small, small_pages * PAGE_SZ, MADV_NOHUGEPAGE))
		return perror("madvise"), FAIL;
	for (i = 0; i < small_pages; i += BLOCK_PAGES)
		small[i * PAGE_SZ] = 1;
	for (i = 0; i < MTHP_BLOCKS; i++)
		mthp[i * BLOCK_SZ] = 1;
	memset(statbuf, 0, sizeof(statbuf));
	prefault_stack();

	for (i = 0; i < 5; i++) {
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
	fd_procs_w = cg_open("w", "cgroup.procs", O_WRONLY);
	fd_stat_p = cg_open("p", "memory.stat", O_RDONLY);
	fd_stat_a = cg_open("p/a", "memory.stat", O_RDONLY);
	fd_stat_w = cg_open("w", "memory.stat", O_RDONLY);
	fd_faults = open(THP_64K_FAULTS, O_RDONLY);	/* optional (v6.9 on) */
	/*
	 * A move checks write access to the common ancestor's cgroup.procs,
	 * which looks its inode up: an accounted allocation, charged to the
	 * memcg being left, unless the file is open. Held open for the run,
	 * so that a move between p/a and p/b (or c12/w and p/b) charges nothing.
	 */
	fd_hold_p = cg_open("p", "cgroup.procs", O_RDONLY);
	fd_hold_top = cg_open("", "cgroup.procs", O_RDONLY);
	if (fd_start < 0 || fd_procs_a < 0 || fd_procs_b < 0 || fd_procs_w < 0 ||
	    fd_stat_p < 0 || fd_stat_a < 0 || fd_stat_w < 0 || fd_hold_p < 0 || fd_hold_top < 0)
		return perror("open"), FAIL;
	/* First reads here: their seq_file buffers are allocated outside. */
	reread(fd_stat_p, "anon");
	reread(fd_stat_a, "anon");
	reread(fd_stat_w, "anon");

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return perror("SKIP: sched_setaffinity to CPU 0"), SKIP;
	return PASS;
}

/*
 * Wait in p/b for the periodic flush: w holds one page more than its
 * memory.stat shows until a flush of the root makes it current (reading w
 * flushes nothing: one page is far below the trigger).
 */
static int wait_periodic(void)
{
	long before = anon_pages(fd_stat_w), v;
	double start;

	if (enter(fd_procs_w))
		return perror("enter w"), FAIL;
	touch_small(1);
	drain_lru();
	if (enter(fd_procs_b))
		return perror("enter p/b"), FAIL;
	start = now();
	while ((v = anon_pages(fd_stat_w)) <= before) {
		if (v < 0)
			return printf("FAIL: no anon in w's memory.stat\n"), FAIL;
		if (now() - start > WAIT_S)
			return printf("SKIP: no periodic flush within %d s\n", WAIT_S), SKIP;
		sleep_ms(5);
	}
	drain_lru();
	return PASS;
}

static int run(long cpus, long k1, long k2, long m)
{
	long p1, p2, a2, v, faults0, faults1, a = k1 + 20 + m, b = 16 + k2;
	double t_skew, waited;
	struct utsname u;
	int ret;

	faults0 = fd_faults >= 0 ? reread(fd_faults, "") : -1;
	printf("in p/b: waiting for the periodic flush\n");
	ret = wait_periodic();
	if (ret)
		return ret;
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
	t_skew = now();
	/* Not a's: reading a flushes it, and a flushed child counts again. */
	p1 = anon_pages(fd_stat_p);
	touch_small(m);				/* a: m pages, flushable or not */
	p2 = anon_pages(fd_stat_p);
	a2 = anon_pages(fd_stat_a);
	faults1 = fd_faults >= 0 ? reread(fd_faults, "") : -1;
	if (p1 < 0 || p2 < 0 || a2 < 0)
		return printf("FAIL: no anon in memory.stat\n"), FAIL;
	uname(&u);
	printf("charged (pages): a = %ld, b = %ld, p = %ld\n", a, b, a + b);
	printf("memory.stat anon (pages) after the skew: p = %ld\n", p1);
	printf("memory.stat anon (pages) after %ld more: p = %ld, p/a = %ld\n", m, p2, a2);
	if (faults0 >= 0 && faults1 - faults0 < 2)
		printf("note: %ld 64 KiB folio faults, 2 expected: a fallback to 4 KiB pages "
		       "makes a PASS say nothing\n", faults1 - faults0);
	if (p2 >= a2) {
		printf("PASS (%s, %ld CPUs): the parent shows at least what its child shows\n",
		       u.release, cpus);
		return PASS;
	}
	/* How long the parent stays short: until a flush of the root. */
	while ((v = anon_pages(fd_stat_p)) < a2 && now() - t_skew < WAIT_S)
		sleep_ms(10);
	waited = now() - t_skew;
	printf("FAIL (%s, %ld CPUs): parent misses %ld of the %ld pages its flushable child "
	       "shows, for %.2f s%s: the early break (v6.16 on)\n", u.release, cpus, a2 - p2,
	       a2, waited, v < a2 ? " (still short at the end of the wait)" : "");
	return FAIL;
}

static void cleanup(void)
{
	char path[4096];
	int i;

	if (fd_start >= 0 && enter(fd_start))
		perror("move back to the starting cgroup");
	for (i = 4; i >= 0; i--) {
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
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), k1 = -1, k2 = 8, m = -1;
	const char *k1_from = "-k";
	int opt, only_plan = 0, ret;
	struct utsname u;

	while ((opt = getopt(argc, argv, "r:k:b:m:nh")) != -1) {
		switch (opt) {
		case 'r': root = optarg; break;
		case 'k': k1 = atol(optarg); break;
		case 'b': k2 = atol(optarg); break;
		case 'm': m = atol(optarg); break;
		case 'n': only_plan = 1; break;
		case 'h': usage(argv[0]); return PASS;
		default: usage(argv[0]); return FAIL;
		}
	}
	if (k2 < 0 || (m < 0 && m != -1))
		return usage(argv[0]), FAIL;
	if (m == -1)
		m = 256 * cpus;
	uname(&u);
	if (k1 < 0) {
		k1 = table_k1(u.release, cpus);
		k1_from = "the model's, for this release and CPU count";
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (k1 < 0) {
		printf("SKIP: the model has no k1 for %s at %ld CPUs: pass -k (flushcheck "
		       "prints it: `flushcheck kernels --plan`)\n", u.release, cpus);
		return SKIP;
	}
	plan(cpus, k1, k2, m, k1_from);
	if (only_plan)
		return PASS;
	ret = setup(k1, k2, m);
	if (ret == PASS)
		ret = run(cpus, k1, k2, m);
	cleanup();
	return ret;			/* restore_thp() runs at exit */
}
