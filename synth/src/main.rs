//! `synth`: the command line over the `synth` library (see [`synth::cli`]).

fn main() -> std::process::ExitCode {
    synth::cli::main()
}
