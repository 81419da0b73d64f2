//! `backends`: progress litmus tests as GPU and CPU programs.
//!
//! The command line lives in the library ([`backends::cli`], one file per
//! subcommand), so this binary only starts it.

fn main() -> std::process::ExitCode {
    backends::cli::main()
}
