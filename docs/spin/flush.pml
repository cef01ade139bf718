/* The memcg statistics flush protocol of mm/memcontrol.c v5.19 / v6.0
 * (873f64b791a2) on the configuration of docs/exhaustive.md: 2 CPUs,
 * MEMCG_CHARGE_BATCH 2, three 3-page updates per CPU, one reader, no
 * periodic work, then main's quiescent read and final flush. Written by
 * hand for a side-by-side timing with flushcheck's stateful search
 * (docs/exhaustive.md); not used by the tests.
 *
 *   spin -DVARIANT=1 -DLIMIT=12 -a flush.pml && gcc -O2 -DSAFETY -o pan pan.c && ./pan
 *
 * VARIANT: 0 = v5.19, 1 = v6.0, 2 = the off-by-one mutant (skips at >= N).
 * The assertion fails iff a reader (or main) decides not to flush while
 * more than LIMIT pages are missing from the aggregate: the largest LIMIT
 * that fails, plus one, is stale_at_no_flush.
 *
 * One Promela step per model step: each atomic operation with the plain
 * (lock-protected or owner-only) accesses after it, as in the model.
 */
#ifndef N
#define N 2        /* CPUs */
#endif
#define BATCH 2
#ifndef UPD
#define UPD 3      /* updates per CPU */
#endif
#define VAL 3

int S[N];          /* memcg->vmstats_percpu->state[0], per CPU */
int U[N];          /* stats_updates, owner only */
int P[N];          /* state_prev, under cgroup_rstat_lock */
int thr;           /* stats_flush_threshold */
int agg;           /* memcg->vmstats.state[0] */
bit flushlock;     /* stats_flush_lock */
bit rstat;         /* cgroup_rstat_lock */
int written;       /* ghost: pages written so far */
byte done;         /* threads finished */

inline check_no_flush() {
    assert(written - agg <= LIMIT)
}

/* __mem_cgroup_flush_stats(): trylock, walk, reset, unlock. */
inline flush() {
    if
    :: atomic { flushlock == 0 -> flushlock = 1 };
       atomic { rstat == 0 -> rstat = 1 };
       c = 0;
       do
       :: c < N ->
          atomic { v = S[c]; d = v - P[c]; P[c] = v };
          if
          :: d != 0 -> atomic { agg = agg + d }
          :: else -> skip
          fi;
          d = 0; v = 0; c++
       :: else -> break
       od;
       c = 0;
       rstat = 0;
       thr = 0;
       flushlock = 0
    :: atomic { flushlock == 1 -> skip }   /* the trylock lost */
    fi
}

/* mem_cgroup_flush_stats() then memcg_page_state(). */
inline read_stats() {
    atomic {
        t = thr;
        if
        :: t <= N -> check_no_flush()
        :: else -> skip
        fi
    };
    if
    :: t > N -> t = 0; flush()
    :: else -> t = 0
    fi;
    atomic { v = agg; v = 0 }
}

proctype cpu(byte me) {
    byte k = 0;
    int x, t;
    do
    :: k < UPD ->
       atomic { S[me] = S[me] + VAL; written = written + VAL; U[me] = U[me] + VAL; x = U[me] };
       if
       :: x > BATCH ->
#if VARIANT == 0
          atomic { thr = thr + x / BATCH; U[me] = 0 }
#else
          atomic {
              t = thr;
#if VARIANT == 1
              if :: t > N -> U[me] = 0; t = 0 :: else -> skip fi
#else
              if :: t >= N -> U[me] = 0; t = 0 :: else -> skip fi
#endif
          };
          if
          :: U[me] != 0 -> atomic { thr = thr + x / BATCH; U[me] = 0; t = 0 }
          :: else -> skip
          fi
#endif
       :: else -> skip
       fi;
       x = 0; k++
    :: else -> break
    od;
    done++
}

proctype reader() {
    int t, v, d;
    byte c;
    read_stats();
    done++
}

init {
    int t, v, d;
    byte c;
    atomic {
        c = 0;
        do
        :: c < N -> run cpu(c); c++
        :: else -> break
        od;
        c = 0;
        run reader()
    };
    done == N + 1;
    read_stats();     /* the quiescent reader */
    flush();          /* the final flush */
    assert(agg == written)
}
