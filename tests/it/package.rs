//! The Debian package (scripts/deb): built from the binary under test, installed by dpkg into a
//! scratch root (so the machine's own /usr is left alone), and used from there.

use crate::common;

use std::process::Command;

use common::scratch;

#[test]
fn the_deb_installs_a_working_binary_its_man_pages_and_completions() {
    let dir = scratch("deb");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/deb");
    // xz at level 1 (dpkg-deb's own variable; scripts/deb leaves the level to it): 2 s where
    // the default level takes 7 s of the suite's CPU for the same archive format.
    let out = Command::new(script)
        .args(["--binary", common::bin(), "--out"])
        .arg(&dir)
        .env("DPKG_DEB_COMPRESSOR_LEVEL", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/deb: {}", String::from_utf8_lossy(&out.stderr));
    let deb = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let version = env!("CARGO_PKG_VERSION");
    assert!(deb.contains(&format!("iogauge_{version}_")) && deb.ends_with(".deb"), "{deb}");
    // What the package says it needs: the C library, from dpkg-shlibdeps.
    let info = Command::new("dpkg-deb").args(["-f", &deb, "Depends"]).output().unwrap();
    assert!(String::from_utf8_lossy(&info.stdout).contains("libc6 (>="), "{}", String::from_utf8_lossy(&info.stdout));

    // An empty dpkg database under a scratch root; the libraries it depends on are the host's.
    let root = dir.join("root");
    for d in ["info", "updates", "triggers"] {
        std::fs::create_dir_all(root.join("var/lib/dpkg").join(d)).unwrap();
    }
    std::fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    let out = Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        // Minimised images tell dpkg to leave out /usr/share/man and /usr/share/doc: this
        // test asks for what the package holds.
        .args(["--force-depends", "--force-script-chrootless", "--path-include=/usr/share/*", "-i", &deb])
        .output()
        .unwrap();
    assert!(out.status.success(), "dpkg -i: {}", String::from_utf8_lossy(&out.stderr));

    let installed = root.join("usr/bin/iogauge");
    let out = Command::new(&installed).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("iogauge {version}"));
    // man finds and renders the pages the package put in place.
    let man = root.join("usr/share/man");
    let out = Command::new("man").arg("-M").arg(&man).arg("iogauge-run").env("MANPAGER", "cat").output().unwrap();
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && page.contains("iogauge-run") && page.contains("--rwmixread"), "{page}");
    let out = Command::new("man").arg("-M").arg(&man).args(["-w", "iogauge"]).output().unwrap();
    assert!(out.status.success(), "no iogauge(1): {}", String::from_utf8_lossy(&out.stderr));
    // bash completes with the installed script.
    let completions = root.join("usr/share/bash-completion/completions/iogauge");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && COMP_WORDS=(iogauge run --rate-m) COMP_CWORD=2 && _iogauge iogauge --rate-m run && echo \"${{COMPREPLY[@]}}\"",
            completions.display()
        ))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("--rate-mbps"), "{}", String::from_utf8_lossy(&out.stderr));
    for f in ["usr/share/zsh/vendor-completions/_iogauge", "usr/share/fish/vendor_completions.d/iogauge.fish"] {
        assert!(root.join(f).is_file(), "{f} not installed");
    }
}
