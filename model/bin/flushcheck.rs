//! `flushcheck`: see [`memcg_flush_model::cli`].

/// The exhaustive search builds and drops a scenario per schedule: mimalloc
/// takes about a fifth off its time (docs/exhaustive.md, section 9).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    memcg_flush_model::cli::main()
}
