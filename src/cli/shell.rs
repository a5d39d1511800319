//! `cgsim completions SHELL` and `cgsim man`: the shell's completion script and the manual page,
//! both generated from the command line's own definition (clap's), so neither can fall behind
//! a new subcommand or flag.

use clap::Command;
use clap_complete::Shell;
use std::process::ExitCode;

/// The completion script for `shell`.
pub fn completions(mut cmd: Command, shell: Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "cgsim", &mut out);
    String::from_utf8(out).expect("clap_complete writes UTF-8")
}

/// The manual page, in roff: cgsim's own page, then a section per subcommand (nested ones
/// too, `cgsim conform coordinator`) with its synopsis, description and options.
pub fn man(cmd: Command) -> String {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut out)
        .expect("writing to memory");
    let mut page = String::from_utf8(out).expect("clap_mangen writes UTF-8");
    push_subcommand_sections(&mut page, &cmd);
    page
}

/// A section for each of `cmd`'s subcommands, each followed by its own nested ones.
fn push_subcommand_sections(page: &mut String, cmd: &Command) {
    for sub in cmd.get_subcommands() {
        page.push_str(&subcommand_section(sub));
        push_subcommand_sections(page, sub);
    }
}

/// One subcommand's section: its name as a section heading, then its synopsis, description
/// and options as subsections (clap_mangen's sections, one level down).
fn subcommand_section(sub: &Command) -> String {
    let name = sub.get_bin_name().unwrap_or(sub.get_name());
    let man = clap_mangen::Man::new(sub.clone());
    let mut out = Vec::new();
    man.render_synopsis_section(&mut out)
        .and_then(|()| man.render_description_section(&mut out))
        .and_then(|()| {
            let has_options = sub.get_arguments().any(|a| !a.is_hide_set());
            if has_options {
                man.render_options_section(&mut out)
            } else {
                Ok(())
            }
        })
        .expect("writing to memory");
    let sections = String::from_utf8(out).expect("clap_mangen writes UTF-8");
    let demoted = format!("\n{sections}").replace("\n.SH ", "\n.SS ");
    format!(".SH \"{}\"{demoted}", name.to_uppercase())
}

/// Writes `text` to stdout (a closed pipe ends it quietly).
pub fn print(text: &str) -> ExitCode {
    super::write_stdout(text);
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every subcommand (nested ones too) and every flag it shows, by the CLI's definition.
    fn names_and_flags(cmd: &Command) -> Vec<String> {
        let mut out = Vec::new();
        for sub in cmd.get_subcommands() {
            out.push(sub.get_name().to_string());
            for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(long) = arg.get_long() {
                    out.push(format!("--{long}"));
                }
            }
            out.extend(names_and_flags(sub));
        }
        out
    }

    #[test]
    fn completions_name_every_subcommand_and_flag() {
        let expected = names_and_flags(&crate::Args::command());
        assert!(expected.contains(&"--timeline".to_string()));
        assert!(expected.contains(&"coordinator".to_string()));
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let script = completions(crate::Args::command(), shell);
            for name in &expected {
                // fish names a long flag `-l NAME`.
                let written = match (shell, name.strip_prefix("--")) {
                    (Shell::Fish, Some(long)) => format!("-l {long}"),
                    _ => name.clone(),
                };
                assert!(script.contains(&written), "{shell}: {name} missing");
            }
        }
    }

    #[test]
    fn the_man_page_names_every_subcommand_and_flag() {
        let page = man(crate::Args::command());
        assert!(
            page.contains("\n.TH cgsim 1 "),
            "{}",
            &page[..200.min(page.len())]
        );
        for name in names_and_flags(&crate::Args::command()) {
            // roff escapes a flag's dashes: \-\-timeline.
            let roff = name.replace('-', "\\-");
            assert!(page.contains(&roff), "{name} missing");
        }
        assert!(page.contains(".SH \"CGSIM RUN\""));
        assert!(page.contains(".SH \"CGSIM CONFORM COORDINATOR\""));
        // No hidden flag is documented.
        assert!(!page.contains("inject\\-double\\-ownership"));
    }
}
