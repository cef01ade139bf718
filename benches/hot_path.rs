//! criterion benchmark of the hot path (`cargo bench --features bench`):
//! `__mod_memcg_state()` on real threads for v5.19, v6.0 and the
//! no-global-accounting ceiling.
//!
//! Ratios between variants are only meaningful within one run; for a table
//! of interleaved rounds use `flushcheck bench`.

// criterion_group! generates an undocumented function.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use memcg_flush_model::measure::bench::{run, HotPath};
use memcg_flush_model::protocol::catalogue::bench_subjects;

fn hot_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("mod_memcg_state");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(3));
    for threads in [1usize, 2, 4, 8, 16, 32] {
        let per_thread = 1 << 16;
        group.throughput(Throughput::Elements((threads * per_thread) as u64));
        // v5.19, v6.0 and the no-global-accounting ceiling.
        for variant in bench_subjects() {
            group.bench_with_input(
                BenchmarkId::new(variant.name.as_str(), threads),
                &threads,
                |b, &t| {
                    b.iter_custom(|iters| {
                        let hp = HotPath::new(t, per_thread);
                        (0..iters)
                            .map(|_| Duration::from_secs_f64(run(&variant, &hp).seconds))
                            .sum()
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, hot_path);
criterion_main!(benches);
