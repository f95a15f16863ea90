//! The job files in examples/ are valid, and a result's `config` reruns the same test.

use crate::common;

use common::*;

#[test]
fn every_example_parses() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            iogauge::job::load(&p, &Default::default()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            n += 1;
        }
    }
    assert!(n >= 4);
}

#[test]
fn a_results_config_reruns_the_test() {
    let job = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/null-count.toml");
    let first = json(&["run", job]);
    assert_eq!(num(&first, "results/0/totals/ios"), 10_000_000.0);
    let config: iogauge::config::Job = serde_json::from_value(first["config"].clone()).unwrap();
    let dir = scratch("rerun");
    let again = dir.join("again.toml");
    std::fs::write(&again, toml::to_string(&config).unwrap()).unwrap();
    let second = json(&["run", again.to_str().unwrap()]);
    assert_eq!(first["config"], second["config"]);
    assert_eq!(num(&second, "results/0/totals/ios"), 10_000_000.0);
    assert_eq!(
        first["results"][0]["totals"]["read_ios"], second["results"][0]["totals"]["read_ios"],
        "same seed, same mix"
    );
}
