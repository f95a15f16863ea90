//! The command line: the commands, run from the flags `args` parses.

mod args;
mod exports;
mod fs;
mod history;
mod interrupt;
pub(crate) mod profile;
mod trace;
mod verify;
mod workload;

/// What the binary prints of a message: every URL in it without its password.
pub use crate::net::without_passwords;
pub use args::{
    Cli, Command, OutputFlags, ProfileArgs, RunArgs, SettingFlags, StudyArgs, TestFlags, fio_flag_hint, profile_test,
    run_test, target_flag_hint,
};
pub use workload::SpecFlags;

use crate::compare;
use crate::config::Test;
use crate::error::{Result, input};
use crate::import::Format;
use crate::job;
use crate::managers;
use crate::plan;
use crate::run;
use crate::spec;
use crate::study;
use args::Destinations;
use exports::Outputs;

/// Prepares, runs and reports a test. Returns the exit status (0, or 1 if any I/O failed).
///
/// Under MPI every manager runs this; only the lead (rank 0) opens outputs and writes.
pub fn execute(test: Test, out: &OutputFlags) -> Result<i32> {
    let group = managers::join(test.settings.sync_timeout)?;
    said(group.as_ref(), execute_on(group.as_ref(), test, out))
}

/// Under MPI the lead says why a command failed while every manager is still there: once
/// they have all finished, the launcher may stop the lead before it could print.
fn said(group: &dyn managers::Group, r: Result<i32>) -> Result<i32> {
    match r {
        Err(e) if group.all().len() > 1 => {
            if group.leads() {
                say!("{}", crate::net::without_passwords(&e.to_string()));
            }
            Ok(e.exit_code())
        }
        r => r,
    }
}

fn execute_on(group: &dyn managers::Group, test: Test, out: &OutputFlags) -> Result<i32> {
    Ok(run_and_write(group, test, out)?.exit_status())
}

/// Runs a test, writes its outputs (the history first) and returns its document.
pub(super) fn run_and_write(
    group: &dyn managers::Group,
    test: Test,
    out: &OutputFlags,
) -> Result<crate::result::ResultDoc> {
    run_and_save(group, test, out).map(|(doc, _)| doc)
}

/// [`run_and_write`], with the history id the lead saved the result under.
fn run_and_save(
    group: &dyn managers::Group,
    test: Test,
    out: &OutputFlags,
) -> Result<(crate::result::ResultDoc, Option<i64>)> {
    let to = out.destinations();
    // The outputs are agreed on with the checks: one exchange between managers, not two.
    let opened = Outputs::open(group, to, Some(&test.settings));
    let (prep, mut exports) = plan::prepare_with(group, test, opened)?;
    if group.leads() {
        for w in prep.warnings() {
            say!("warning: {w}");
        }
    }
    interrupt::stop_on_interrupt();
    let run::Tested { doc, maps } = run::run_test(&prep, group, &mut exports)?;
    exports.write_run(doc.clone())?;
    if let (Some(why), true) = (&doc.failed, group.leads()) {
        say!("{why}; the workloads before it are kept");
    }
    // Every manager keeps the maps of its own targets, on its own host.
    verify::save_maps(&maps)?;
    Ok((doc, exports.saved_id()))
}

/// Runs a study and writes its outputs. Returns the exit status (0, or 1 if any I/O failed,
/// 130 if stopped by Ctrl-C).
pub fn study(a: &StudyArgs) -> Result<i32> {
    let Some(name) = &a.job else {
        for (name, about) in study::builtin::BUILTINS {
            println!("{name:<20} {about}");
        }
        print!("\n{}", spec::seeds_legend());
        return Ok(0);
    };
    let path = std::path::Path::new(name);
    let mut job = if path.exists() || [".toml", ".icf", ".fio"].iter().any(|e| name.ends_with(e)) {
        if !a.targets.is_empty() {
            return Err(input(format!("--target goes with a built-in study: {name} names its own targets")));
        }
        let mut job = job::load(path, &a.import.import(&a.settings))?;
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if job.study.is_none() && Format::of(path, &text) == Format::Icf {
            // An Iometer test without cycling: a study of one point.
            job.study = Some(Default::default());
        }
        if job.study.is_none() && job.fs.is_none() {
            return Err(input(format!(
                "{name} has no [study] section: add one (docs/job-file.md) or run it with iogauge run"
            )));
        }
        job
    } else {
        let given = study::builtin::Given { targets: &a.targets, dir: a.dir.as_deref(), total: a.total };
        study::builtin::builtin(name, &given)?
    };
    if job.fs.is_none() && a.outputs.iozone_csv.is_some() {
        return Err(input(format!(
            "--iozone-csv goes with a file-system study ([fs], seed002-filesystem), not {name}"
        )));
    }
    if job.fs.is_some() {
        if let Some(flag) = a
            .settings
            .distribution
            .as_ref()
            .map(|_| "--distribution")
            .or(a.settings.random_map.then_some("--random-map"))
        {
            return Err(input(format!(
                "{flag} places random offsets on block targets; {name} is a file-system study, which has none"
            )));
        }
        if let Some(r) = a.repeat {
            job.study.get_or_insert_with(Default::default).repeat = r;
        }
        return fs::run(&job, a.outputs.destinations());
    }
    a.settings.apply(&mut job)?;
    if let (Some(r), Some(s)) = (a.repeat, job.study.as_mut()) {
        s.repeat = r;
    }
    // Checked now, before any manager starts; each point is resolved again as it runs.
    Test::from_job(&job)?;
    let points = study::points(&job)?;
    let group = managers::join(job.test.sync_timeout)?;
    said(
        group.as_ref(),
        study_on(group.as_ref(), a.outputs.destinations(), name, &job, &points).map(|(d, _)| d.exit_status()),
    )
}

/// Runs a study and writes its outputs: its document, and the history id the lead saved it
/// under.
fn study_on(
    group: &dyn managers::Group,
    to: Destinations,
    name: &str,
    job: &crate::config::Job,
    points: &[study::Point],
) -> Result<(study::doc::StudyDoc, Option<i64>)> {
    let mut exports = managers::all_ok(group, Outputs::open(group, to, Some(&job.test)), "opening the outputs")?;
    interrupt::stop_on_interrupt();
    let study::run::Studied { doc, maps } = study::run::run_study(job, points, &mut exports, group)?;
    let extra = (name == "baseline").then(|| study::builtin::drive_figures(&doc).unwrap_or_default());
    exports.write_study(&doc, extra)?;
    // Every manager keeps the maps of its own targets, on its own host.
    verify::save_maps(&maps)?;
    Ok((doc, exports.saved_id()))
}

/// The workbench's run under MPI, on every rank, in this process: the job as `iogauge run` or
/// `iogauge study` runs it, its live lines into `live` (the lead's), saved to the history.
fn page_run(group: &dyn managers::Group, order: &crate::ui::Order, live: Option<&std::path::Path>) -> crate::ui::Ended {
    // What the command line would print besides the table: warnings, and why it failed.
    let said = |warnings: &[String], failed: &Option<String>| -> String {
        let warnings = warnings.iter().map(|w| format!("iogauge: warning: {w}\n"));
        warnings.chain(failed.iter().map(|f| format!("iogauge: {f}\n"))).collect()
    };
    let ran = (|| -> Result<(i32, Option<i64>, String)> {
        let job = job::parse(&order.toml, "the workbench's job")?;
        let document = args::DocumentFlags {
            quiet: true,
            live: args::LiveFlags { live_json: live.map(Into::into), ..Default::default() },
            history: history::SaveFlags { db: order.db.clone(), no_history: false },
            ..Default::default()
        };
        if job.fs.is_some() {
            return Err(input(
                "a file-system test ([fs]) runs on one host: start the workbench without mpirun, or run it with iogauge study",
            ));
        }
        if job.study.is_none() {
            let out = OutputFlags { document, ..Default::default() };
            let (doc, id) = run_and_save(group, Test::from_job(&job)?, &out)?;
            return Ok((doc.exit_status(), id, said(&doc.warnings, &doc.failed)));
        }
        let outputs = args::StudyOutputs { document, fio_json: None, iozone_csv: None };
        let (doc, id) = study_on(group, outputs.destinations(), "", &job, &study::points(&job)?)?;
        Ok((doc.exit_status(), id, said(&doc.warnings, &doc.failed)))
    })();
    // The run is over: a stop asked of it must not stop the next one, nor end the workbench.
    interrupt::reset();
    match ran {
        Ok((exit_status, history_id, message)) => crate::ui::Ended { exit_status, history_id, message },
        Err(e) => crate::ui::Ended { exit_status: e.exit_code(), history_id: None, message: format!("iogauge: {e}\n") },
    }
}

/// `iogauge specs [NAME]`.
pub fn specs(name: Option<&str>) -> Result<String> {
    let mut out = String::new();
    match name {
        None => {
            for s in spec::builtin() {
                out.push_str(&format!("{:<22} {}\n", s.name, s.description));
            }
            out.push_str(
                "random-read-SIZE, random-write-SIZE, streaming-read-SIZE, streaming-write-SIZE: any size\n\n",
            );
            out.push_str(&spec::seeds_legend());
        }
        Some(n) => {
            let s = spec::find_builtin(n)?;
            out.push_str(&format!("{}: {}\n", s.name, s.description));
            out.push_str("  size  share  read  random  align  delay_ms  burst\n");
            for l in &s.lines {
                out.push_str(&format!(
                    "{:>6}  {:>4}%  {:>3}%  {:>5}%  {:>5}  {:>8}  {:>5}\n",
                    crate::units::format_size(l.size),
                    l.share,
                    l.read,
                    l.random,
                    l.align.map_or("size".into(), crate::units::format_size),
                    l.delay_ms,
                    l.burst
                ));
            }
        }
    }
    Ok(out)
}

/// `iogauge man [COMMAND]`: the page of iogauge or of one command (git's iogauge-run(1) style).
fn man(command: Option<&str>) -> Result<i32> {
    let page = man_page(command)?;
    std::io::Write::write_all(&mut std::io::stdout(), &page)
        .map_err(|e| crate::error::runtime(format!("writing the man page: {e}")))?;
    Ok(0)
}

/// `iogauge man --dir DIR`: every page into DIR (made if missing), each written whole.
fn man_pages(dir: &std::path::Path) -> Result<i32> {
    let commands: Vec<String> =
        <Cli as clap::CommandFactory>::command().get_subcommands().map(|c| c.get_name().to_string()).collect();
    let mut pages = vec![("iogauge.1".to_string(), man_page(None)?)];
    for c in &commands {
        pages.push((format!("iogauge-{c}.1"), man_page(Some(c))?));
    }
    history::guard(None).dir("--dir", dir)?.write(&pages, "the man pages")?;
    Ok(0)
}

/// The roff of iogauge's page, or of one command's.
fn man_page(command: Option<&str>) -> Result<Vec<u8>> {
    let all = <Cli as clap::CommandFactory>::command();
    let page = match command {
        None => all,
        Some(name) => {
            let sub = all.find_subcommand(name).ok_or_else(|| {
                let names: Vec<&str> = all.get_subcommands().map(|c| c.get_name()).collect();
                input(format!("iogauge man {name}: no such command; give one of {}", names.join(", ")))
            })?;
            sub.clone()
                .display_name(format!("iogauge-{name}"))
                .version(env!("CARGO_PKG_VERSION"))
                .bin_name(format!("iogauge {name}"))
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .map_err(|e| crate::error::runtime(format!("making the man page: {e}")))?;
    Ok(out)
}

/// Runs the parsed command line; returns the exit status.
pub fn main(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(a) => execute(run_test(&a)?, &a.flags.output),
        Command::Profile(a) => execute(profile_test(&a)?, &a.flags.output),
        Command::Study(a) => study(&a),
        Command::Fs(a) => fs::run(&a.job(), a.outputs.destinations()),
        Command::Convert { file, import } => {
            let job = job::load(&file, &import.import(&Default::default()))?;
            let toml = crate::job::to_toml(&job)
                .map_err(|e| input(format!("{}: cannot write as TOML: {e}", file.display())))?;
            print!("# iogauge's job for {}\n{toml}", file.display());
            Ok(0)
        }
        Command::Compare { a, b, db, detail } => {
            let mut docs = history::Documents::new(&db);
            let ((a, da), (b, db_)) = (docs.load(&a)?, docs.load(&b)?);
            print!("{}", compare::text([&a, &b], &da, &db_, detail.detail.unwrap_or_default())?);
            Ok(0)
        }
        Command::Report(a) => history::report(&a),
        Command::History(a) => history::history(&a),
        Command::Show { id, db, detail } => history::show(id, &db, detail.detail.unwrap_or_default()),
        Command::Export { id, format, output, db } => history::export(id, format, output.as_deref(), &db),
        Command::Verify(a) => verify::verify(&a),
        Command::Capture(a) => trace::capture(&a),
        Command::Replay(a) => execute(trace::replay_test(&a)?, &a.flags.output),
        Command::Distil(a) => trace::distil(&a),
        Command::Ui { listen, db } => {
            let listen = crate::http::parse_addr("--listen", &listen)?;
            db.as_deref().map(crate::history::check_path).transpose()?;
            interrupt::stop_on_interrupt();
            let group = managers::join(crate::config::TestSettings::default().sync_timeout)?;
            let ranks = crate::ui::InProcess { run: &page_run, stop: interrupt::request };
            let ending = crate::ui::Ending { asked: &interrupt::requested, again: &interrupt::now };
            crate::ui::serve(crate::ui::Options { listen, db }, ending, group.as_ref(), ranks)?;
            Ok(0)
        }
        Command::Specs { name } => {
            print!("{}", specs(name.as_deref())?);
            Ok(0)
        }
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "iogauge",
                &mut std::io::stdout(),
            );
            Ok(0)
        }
        Command::Man { dir: Some(dir), .. } => man_pages(&dir),
        Command::Man { command, dir: None } => man(command.as_deref()),
    }
}
