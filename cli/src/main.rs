//! `sparsetool`: a thin translator from the command line to the libraries.
//!
//! Errors print as `error: <message>` with their causes; bad input exits 1,
//! environment problems (no GPU, I/O device full) exit 2.

mod alloc;
mod args;
mod commands;
mod dispatch;
mod io;
mod output;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

#[global_allocator]
static GLOBAL: alloc::Allocator = alloc::Allocator;

/// An environment problem (exit code 2) rather than bad input (exit code 1).
#[derive(Debug)]
pub struct EnvError(pub String);

impl std::fmt::Display for EnvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for EnvError {}

fn run(cli: Cli) -> anyhow::Result<()> {
    output::install_interrupt_handler();
    output::set_quiet(cli.quiet);
    output::set_threads(cli.threads)?;
    match cli.command {
        Command::Info(a) => commands::info::run(&a),
        Command::Analyze(a) => commands::analyze::run(&a),
        Command::Convert(a) => commands::convert::run(&a),
        Command::Spmv(a) => commands::spmv::run(&a),
        Command::Bench(a) => commands::bench::run(&a),
        Command::Calibrate(a) => commands::calibrate::run(&a),
        Command::Gen(a) => commands::gen::run(&a),
        Command::Completions(a) => commands::extra::completions(&a),
        Command::Man(a) => commands::extra::man(&a),
    }
}

fn main() -> ExitCode {
    // Usage errors exit 1 like every other bad input: exit 2 is reserved for
    // the environment (no GPU), so that a script can tell a typo from a
    // machine without a device. `--help` and `--version` exit 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            print_parse_error(&e);
            return if e.use_stderr() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = run(cli);
    // A signal's handler is cleaning up on its own thread and exits 130:
    // neither success nor the error its cleanup caused here (a scratch
    // file removed under a writer) may win the race to exit first.
    if sparsetool_formats::io::interrupted() {
        // the handler exits within moments; should it never get there, exit
        // with its status anyway
        std::thread::sleep(std::time::Duration::from_secs(10));
        std::process::exit(130);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A closed pipe (`sparsetool info x --json | head`) is not an error.
            if err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {err:#}");
            if err.chain().any(|c| c.downcast_ref::<EnvError>().is_some()) {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// Prints a parser error. For an unknown flag, clap's tip "to pass
/// '--flag' as a value, use '-- --flag'" is dropped: a misspelled flag is
/// never meant as a file name here, and the tip sends users the wrong way.
fn print_parse_error(e: &clap::Error) {
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        let _ = e.print();
        return;
    }
    let text = e.render().to_string();
    let mut kept: Vec<&str> = Vec::new();
    for l in text.lines() {
        let blank_again = l.trim().is_empty() && kept.last().is_some_and(|p| p.trim().is_empty());
        if !l.trim_start().starts_with("tip: to pass '") && !blank_again {
            kept.push(l);
        }
    }
    eprintln!("{}", kept.join("\n").trim_end());
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        super::Cli::command().debug_assert();
    }
}
