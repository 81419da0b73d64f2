//! One interface across the three tools (issue 23 item 7), checked on the
//! clap commands themselves rather than on a list kept beside them: every
//! command and subcommand of `oracle`, `backends` and `synth` is walked,
//! so a new one is checked without touching this file.
//!
//! - every argument (paths, formats, flags, positionals) has help text;
//! - every command's `--help` states the exit statuses in one form
//!   (`Exit status: 0 success; 2 bad input or usage (...); 1 anything else
//!   (...)`, [`progress_litmus::error::exit_status_help`]);
//! - `--test` means one thing everywhere: a test's name (a suite of tests
//!   is `--tests`), and no flag spells it as an alias;
//! - bare `synth`, like bare `oracle` and `backends`, prints its commands;
//! - `backends run --target` lists only the targets it runs.

use std::process::Command;

/// Every command of `root` with its path (`backends db import`), the root
/// first, without clap's own `help` subcommand.
fn commands(root: clap::Command) -> Vec<(String, clap::Command)> {
    let mut root = root;
    root.build();
    let mut out = Vec::new();
    let mut stack = vec![(root.get_name().to_string(), root)];
    while let Some((path, cmd)) = stack.pop() {
        for sub in cmd.get_subcommands() {
            if sub.get_name() != "help" {
                stack.push((format!("{path} {}", sub.get_name()), sub.clone()));
            }
        }
        out.push((path, cmd));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn all_commands() -> Vec<(String, clap::Command)> {
    let mut v = commands(oracle::cli::command());
    v.extend(commands(backends::cli::command()));
    v.extend(commands(synth::cli::command()));
    v
}

#[test]
fn every_argument_of_every_command_has_help() {
    let mut missing = Vec::new();
    let mut seen = 0;
    for (path, cmd) in all_commands() {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            seen += 1;
            let help = arg
                .get_help()
                .or(arg.get_long_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            if help.trim().is_empty() {
                missing.push(format!("{path}: {id}"));
            }
        }
    }
    assert!(
        seen > 100,
        "only {seen} arguments: the walk missed commands"
    );
    assert!(missing.is_empty(), "arguments without help: {missing:#?}");
}

#[test]
fn every_command_states_the_exit_statuses_in_one_form() {
    let mut bad = Vec::new();
    let commands = all_commands();
    for (path, cmd) in &commands {
        let after = cmd
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        let first = after.lines().next().unwrap_or("");
        let ok = first.starts_with("Exit status: 0 success; 2 bad input or usage (")
            && first.contains("); 1 anything else (");
        if !ok {
            bad.push(format!("{path}: {first:?}"));
        }
    }
    assert!(commands.len() > 20, "{} commands", commands.len());
    assert!(
        bad.is_empty(),
        "exit statuses not in the one form: {bad:#?}"
    );
    // The form is the one function's.
    let form = progress_litmus::error::exit_status_help("X", "Y");
    assert_eq!(
        form,
        "Exit status: 0 success; 2 bad input or usage (X); 1 anything else (Y)."
    );
}

#[test]
fn test_means_a_test_name_everywhere() {
    let mut found = Vec::new();
    for (path, cmd) in all_commands() {
        for arg in cmd.get_arguments() {
            let long = arg.get_long().unwrap_or("");
            let aliases: Vec<&str> = arg.get_all_aliases().unwrap_or_default();
            assert!(
                !aliases.contains(&"test") && !aliases.contains(&"tests"),
                "{path}: --{long} is also spelled --test(s)"
            );
            if long == "test" {
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(
                    help.contains("name"),
                    "{path}: --test is not a test's name: {help}"
                );
                found.push(path.clone());
            }
            if long == "tests" {
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(
                    help.contains("suite") || help.contains("tests"),
                    "{path}: --tests: {help}"
                );
            }
        }
    }
    assert!(found.len() >= 3, "{found:?}");
}

/// Bare `oracle`, `backends` and `synth`: the usage with every command,
/// on one stream, exit status 2 (nothing was done).
#[test]
fn bare_commands_print_their_commands() {
    let synth_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_synth"));
    let dir = synth_bin.parent().unwrap().to_path_buf();
    let bins = [
        (synth_bin, synth::cli::command()),
        (dir.join("oracle"), oracle::cli::command()),
        (dir.join("backends"), backends::cli::command()),
    ];
    for (bin, cmd) in bins {
        if !bin.exists() {
            // oracle and backends are built by their own crates' tests.
            eprintln!("skipped: {} is not built", bin.display());
            continue;
        }
        let o = Command::new(&bin).output().unwrap();
        let bin = bin.display();
        assert_eq!(o.status.code(), Some(2), "{bin}");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(text.contains("Commands:"), "{bin}: {text}");
        for sub in cmd.get_subcommands() {
            assert!(
                text.contains(&format!("  {} ", sub.get_name())),
                "{bin}: {} not listed: {text}",
                sub.get_name()
            );
        }
        assert!(
            text.contains("Exit status: 0 success; 2 bad input or usage"),
            "{bin}"
        );
    }
}

#[test]
fn run_lists_only_the_targets_it_runs() {
    let cmd = backends::cli::command();
    let run = cmd.find_subcommand("run").unwrap();
    let target = run
        .get_arguments()
        .find(|a| a.get_long() == Some("target"))
        .unwrap();
    let values: Vec<String> = target
        .get_possible_values()
        .iter()
        .map(|v| v.get_name().to_string())
        .collect();
    assert_eq!(values, ["cpp", "cuda", "vulkan", "wgpu"]);
    // import takes webgpu (the page's result file).
    let import = cmd.find_subcommand("import").unwrap();
    let target = import
        .get_arguments()
        .find(|a| a.get_long() == Some("target"))
        .unwrap();
    assert!(target
        .get_possible_values()
        .iter()
        .any(|v| v.get_name() == "webgpu"));
    // And `run --target webgpu` says where its results come from.
    let e = match backends::cli::command()
        .try_get_matches_from(["backends", "run", "--target", "webgpu", "s", "-o", "o"])
    {
        Err(e) => e.to_string(),
        Ok(_) => panic!("run --target webgpu was accepted"),
    };
    assert!(e.contains("backends import --target webgpu"), "{e}");
}
