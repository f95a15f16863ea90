//! The `iogauge` binary: parses the command line and maps errors to exit statuses
//! (0 success, 1 an I/O error or runtime failure, 2 bad input).

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};

fn main() {
    // `iogauge history | head` ends quietly, as other Unix tools do, when head has read
    // enough: Rust ignores SIGPIPE and every write would then fail with "Broken pipe". A test
    // ignores it again once it starts (`interrupt::stop_on_interrupt`): its results are saved
    // whatever becomes of its readers.
    // SAFETY: restores the default action of one signal, before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = match iogauge::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            std::process::exit(0);
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            std::process::exit(2);
        }
        Err(e) if e.kind() == ErrorKind::UnknownArgument && fio_hint(&e).is_some() => {
            iogauge::say!("{}", fio_hint(&e).unwrap_or_default());
            std::process::exit(2);
        }
        Err(e) if e.kind() == ErrorKind::UnknownArgument && target_hint(&e).is_some() => {
            iogauge::say!("{}", target_hint(&e).unwrap_or_default());
            std::process::exit(2);
        }
        Err(e) if e.kind() == ErrorKind::MissingRequiredArgument => {
            // Clap lists the missing flags on lines of their own: named here on the one line.
            let missing = match e.get(ContextKind::InvalidArg) {
                Some(ContextValue::Strings(v)) => v.join(", "),
                Some(v) => v.to_string(),
                None => "an argument".into(),
            };
            let command = command_of_args();
            iogauge::say!("{command}needs {missing} (see 'iogauge {command}--help')");
            std::process::exit(2);
        }
        Err(e) => {
            // One line: clap's first, without its usage block, a range in words, what clap
            // would have said below it (the names a flag takes, the nearest to what was
            // typed), and the help of the command given.
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ");
            let help = if e.kind() == ErrorKind::InvalidSubcommand { String::new() } else { command_of_args() };
            // The argument it quotes may be a URL with a password (a target without its flag).
            let first = iogauge::cli::without_passwords(&in_words(first));
            iogauge::say!("{first}{} (see 'iogauge {help}--help')", choices(&e));
            std::process::exit(2);
        }
    };
    // Under MPI the launcher tracks the processes it started: they stay as they are.
    if cli.command.tests_storage() && iogauge::managers::launched_rank().is_none() {
        if let Err(e) = iogauge::host::session::apart() {
            iogauge::say!("{e}");
            std::process::exit(e.exit_code());
        }
    }
    let outcome = iogauge::cli::main(cli);
    let held = iogauge::run::held_targets();
    if !held.is_empty() {
        iogauge::say!(
            "I/Os given up on {} still wait in the kernel; this process cannot exit until they end \
             (the results are written: the storage answers, a frozen filesystem is thawed with fsfreeze -u, or a \
             FUSE connection is aborted: echo 1 > /sys/fs/fuse/connections/N/abort, N from stat -c %d FILE)",
            held.join(", ")
        );
    }
    match outcome {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // Under MPI every rank fails alike (the managers agree on failures), and rank 0
            // says why once.
            // A URL the message quotes (a parser's, of a value it could not read) loses its password.
            if iogauge::managers::launched_rank().unwrap_or(0) == 0 {
                iogauge::say!("{}", iogauge::cli::without_passwords(&e.to_string()));
            }
            std::process::exit(e.exit_code());
        }
    }
}

/// "fs " when the command line names the command `fs`, for the help to point at.
fn command_of_args() -> String {
    std::env::args().nth(1).filter(|a| !a.starts_with('-')).map_or(String::new(), |a| format!("{a} "))
}

/// Clap's `150 is not in 0..=100` as `150 is out of range: give 0 to 100`. A number past what
/// the flag's type holds (`0..=4294967295`) is too large: the key's own check may take less
/// (`--io-wq-threads`: 1 to 4096), and names its range when given a number it holds.
fn in_words(message: &str) -> String {
    let Some((before, range)) = message.split_once(" is not in ") else { return message.to_string() };
    let type_max = |hi: &str| {
        [u8::MAX as u64, u16::MAX as u64, u32::MAX as u64, i64::MAX as u64, u64::MAX]
            .iter()
            .any(|m| m.to_string() == hi)
    };
    match range.split_once("..=") {
        Some(("0", hi)) if type_max(hi) => format!("{before} is too large"),
        Some((lo, hi)) => format!("{before} is out of range: give {lo} to {hi}"),
        None => message.to_string(),
    }
}

/// What clap says below its first line, on that line: `: give wrap or scale`, `: did you mean
/// --time?`; empty where it says nothing of the kind.
fn choices(e: &clap::Error) -> String {
    let words = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    // Clap lists the most alike last.
    let nearest = [ContextKind::SuggestedSubcommand, ContextKind::SuggestedArg, ContextKind::SuggestedValue]
        .into_iter()
        .flat_map(words)
        .rev()
        .collect::<Vec<_>>();
    let valid = words(ContextKind::ValidValue);
    if !nearest.is_empty() {
        format!(": did you mean {}?", nearest.join(" or "))
    } else if let Some((last, rest)) = valid.split_last().filter(|_| e.kind() == ErrorKind::InvalidValue) {
        match rest {
            [] => format!(": give {last}"),
            _ => format!(": give {} or {last}", rest.join(", ")),
        }
    } else {
        String::new()
    }
}

/// For a target given without its flag (`iogauge profile /dev/sdb`): the flag.
fn target_hint(e: &clap::Error) -> Option<String> {
    let arg = e.get(ContextKind::InvalidArg)?.to_string();
    iogauge::cli::target_flag_hint(command_of_args().trim(), &arg)
}

/// For a fio flag iogauge does not have: which iogauge flag does the same.
fn fio_hint(e: &clap::Error) -> Option<String> {
    let arg = e.get(ContextKind::InvalidArg)?.to_string();
    let hint = iogauge::cli::fio_flag_hint(&arg)?;
    let name = arg.split('=').next().unwrap_or(&arg);
    Some(format!("{name} is fio's flag: {hint} (see 'iogauge run --help')"))
}
