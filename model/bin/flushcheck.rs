//! `flushcheck`: see [`memcg_flush_model::cli`].

fn main() -> std::process::ExitCode {
    memcg_flush_model::cli::main()
}
