//! A third protocol, for the unit tests only: `fake://` targets whose every I/O completes at
//! the next poll, as the null target's do. It is added as a real protocol would be (this file,
//! and its line in [`super::PROTOCOLS`]), and its tests run a job through the plan, the safety
//! checks and the engine, which name no protocol.

use std::cell::RefCell;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::{Connection, Export, Pending, Protocol};
use crate::engine::Io;
use crate::error::{Result, input, runtime};
use crate::net::{Address, Locator};

/// I/Os every fake connection has completed (the tests' exact count).
static COMPLETED: AtomicU64 = AtomicU64::new(0);

/// `fake://SERVER/EXPORT`; an export named `ro` is read-only.
pub struct Fake;

impl Protocol for Fake {
    fn name(&self) -> &'static str {
        "fake"
    }

    fn schemes(&self) -> &'static [&'static str] {
        &["fake"]
    }

    fn noun(&self) -> &'static str {
        "fake export"
    }

    fn speaker(&self) -> &'static str {
        "the fake server"
    }

    fn locate(&self, url: &str) -> Result<Locator> {
        let rest = url.strip_prefix("fake://").ok_or_else(|| input(format!("target {url}: not a fake:// URL")))?;
        let (server, export) = rest.split_once('/').unwrap_or((rest, ""));
        Ok(Locator { protocol: "fake", server: server.into(), export: export.into(), lun: None })
    }

    fn connect(&self, at: &Address, _: Duration) -> Result<Box<dyn Connection>> {
        if at.locator.server == "down" {
            return Err(runtime("connection refused"));
        }
        // An eventfd whose counter is never read stays readable: every poll returns at once.
        // SAFETY: no pointers; a non-negative return is a new descriptor we own.
        let fd = unsafe { libc::eventfd(1, libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(runtime(std::io::Error::last_os_error().to_string()));
        }
        // SAFETY: fd is ours alone.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Box::new(FakeConnection { fd, read_only: at.locator.export == "ro", queued: RefCell::default() }))
    }
}

struct FakeConnection {
    fd: OwnedFd,
    read_only: bool,
    /// Commands queued, completed at the next notify.
    queued: RefCell<Vec<*mut Pending>>,
}

impl Connection for FakeConnection {
    fn export(&self, at: &Locator) -> Export {
        Export {
            size: 1 << 30,
            block: 512,
            model: format!("fake export '{}' on {}", at.export, at.server),
            device: None,
            can_trim: false,
            can_flush: true,
            can_fua: false,
            multi_conn: true,
            read_only: self.read_only,
        }
    }

    fn read_now(&mut self, buf: &mut [u8], _: u64, _: Duration) -> Result<()> {
        buf.fill(0);
        Ok(())
    }

    fn driver(&self) -> &'static str {
        "fake (none"
    }

    fn fd(&self) -> libc::c_int {
        self.fd.as_raw_fd()
    }

    fn wants(&self) -> i16 {
        libc::POLLIN
    }

    fn notify(&self, _: i16) -> Result<()> {
        for p in self.queued.borrow_mut().drain(..) {
            COMPLETED.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the engine keeps every queued slot's Pending alive while we hold it.
            unsafe { (*p).complete(0) };
        }
        Ok(())
    }

    unsafe fn queue(&self, _: &Io, pending: *mut Pending) -> std::result::Result<(), i32> {
        self.queued.borrow_mut().push(pending);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Test;
    use crate::managers::Solo;
    use crate::run::Silent;
    use crate::targets::TargetKind;

    fn run(job: &str) -> Result<crate::result::ResultDoc> {
        let test = Test::from_job(&crate::job::parse(job, "fake.toml")?)?;
        let group = Solo::new();
        let prep = crate::plan::prepare_for(&group, test)?;
        Ok(crate::run::run_test(&prep, &group, &mut Silent)?.doc)
    }

    fn job(target: &str, read: u32) -> String {
        format!(
            "[test]\nramp = \"0s\"\ntime = \"300ms\"\n[[spec]]\nname = \"s\"\n\
             lines = [{{ size = \"4K\", share = 100, read = {read}, random = 100 }}]\n\
             [[worker]]\nspec = \"s\"\noutstanding = 4\ntargets = [\"{target}\"]\n"
        )
    }

    #[test]
    fn a_third_protocol_runs_a_job_through_the_plan_the_checks_and_the_engine() {
        let before = COMPLETED.load(Ordering::Relaxed);
        let doc = run(&job("fake://here/disk", 100)).unwrap();
        let done = COMPLETED.load(Ordering::Relaxed) - before;
        let t = &doc.target_info[0];
        assert_eq!((t.kind, t.model.as_str()), (TargetKind::Network(&Fake), "fake export 'disk' on here"));
        // A document says the protocol's name as its kind, and reads back to the protocol.
        assert_eq!(serde_json::to_value(t.kind).unwrap(), "fake");
        let kind = |name: &str| serde_json::from_value::<TargetKind>(serde_json::json!(name));
        assert_eq!(kind("fake").unwrap(), TargetKind::Network(&Fake));
        assert_eq!(kind("nbd").unwrap(), TargetKind::Network(&super::super::nbd::Nbd));
        assert_eq!(kind("block").unwrap(), TargetKind::Block);
        assert!(kind("nvme-tcp").is_err());
        let ios = doc.results[0].totals.metrics.ios;
        // Every I/O counted completed here; those in flight at the end (at most 4) were not counted.
        assert!(ios > 0 && ios <= done && done <= ios + 4, "{ios} counted, {done} completed");
        // The safety checks and the plan ask the protocol: writes to a read-only export are
        // refused as the user's mistake, an unreachable server at inspection too.
        let e = run(&job("fake://here/ro", 0)).unwrap_err();
        assert!(e.to_string().contains("the fake server says it is read-only") && e.exit_code() == 2, "{e}");
        let e = run(&job("fake://down/disk", 100)).unwrap_err();
        assert!(e.to_string().contains("fake://down/disk: cannot connect: connection refused") && e.exit_code() == 2);
    }
}
