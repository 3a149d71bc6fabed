//! `sparsetool completions` and `sparsetool man`: generated from the same
//! clap definitions as the parser, so they cannot drift from it.

use std::io::Write;

use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs, ManArgs};

/// Runs `completions`: the script for the shell on stdout.
pub fn completions(a: &CompletionsArgs) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "sparsetool", &mut buf);
    let mut out = std::io::stdout().lock();
    out.write_all(&buf)?;
    out.flush()?;
    Ok(())
}

/// The roff page of `cmd`.
fn page(cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf)?;
    Ok(buf)
}

/// Runs `man`: the main page on stdout, or with `-o DIR` `sparsetool.1`
/// and one `sparsetool-COMMAND.1` per command in DIR (each written
/// atomically).
pub fn man(a: &ManArgs) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    cmd.build();
    let Some(dir) = &a.output else {
        let mut out = std::io::stdout().lock();
        out.write_all(&page(cmd)?)?;
        out.flush()?;
        return Ok(());
    };
    if !dir.is_dir() {
        anyhow::bail!("{}: not a directory (man -o DIR writes one page per command into an existing directory)", dir.display());
    }
    let mut pages = vec![("sparsetool.1".to_string(), page(cmd.clone())?)];
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("sparsetool-{}", sub.get_name());
        pages.push((format!("{name}.1"), page(sub.clone().name(name))?));
    }
    // Check every target first, so that a refusal writes nothing.
    for (file, _) in &pages {
        crate::output::check_target(&dir.join(file), a.force)?;
    }
    for (file, bytes) in &pages {
        sparsetool_formats::io::write_atomic(&dir.join(file), a.force, |w| {
            w.write_all(bytes)
                .map_err(|e| sparsetool_formats::io::Error::Path {
                    path: dir.join(file).display().to_string(),
                    message: format!("cannot write: {e}"),
                })
        })?;
    }
    crate::output::note!("wrote {} pages to {}", pages.len(), dir.display());
    Ok(())
}
