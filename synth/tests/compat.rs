//! The bytes a long run depends on stay the same (issue 24): runs of the
//! 6-instruction configurations are started with one binary and resumed or
//! merged with a later one, so the shard boundaries for a given `--shard
//! K/N`, the packed and RON outputs and the journal format must not move.
//! The checksums below are of outputs written by the binary before the
//! explicit engine's speed-up (commit 66752be); the journal is the head of
//! one that binary left behind when killed mid-run.

mod common;
use common::{ok, scratch, stderr, synth};
use synth::checksum::Fnv64;

fn fnv(path: &std::path::Path) -> u64 {
    let mut h = Fnv64::default();
    h.write(&std::fs::read(path).unwrap());
    h.0
}

#[test]
fn shard_outputs_are_the_bytes_of_the_earlier_binary() {
    let dir = scratch("gold");
    let cases: [(&[&str], &str, u64); 5] = [
        (
            &["-t", "3", "-i", "4", "--shard", "1/3"],
            "a.axb.gz",
            0xe3d026f342cccb68,
        ),
        (
            &["-t", "3", "-i", "4", "--shard", "2/3"],
            "b.axb.gz",
            0x8a7b179810805cc0,
        ),
        (
            &["-t", "3", "-i", "4", "--shard", "3/3"],
            "c.axb.gz",
            0x5b4dfeda311ab5b9,
        ),
        (
            &["-t", "4", "-i", "5", "--shard", "7/64"],
            "d.axb.gz",
            0x5e0857f3b99224cd,
        ),
        (
            &["-t", "2", "-i", "4", "--shard", "5/9"],
            "e.ron",
            0xbc45ae8f8d4bf869,
        ),
    ];
    for (args, out, want) in cases {
        let mut a = args.to_vec();
        a.extend(["-o", out]);
        ok(synth(&dir, &a));
        assert_eq!(fnv(&dir.join(out)), want, "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_journal_of_the_earlier_binary_resumes_to_the_same_bytes() {
    let dir = scratch("journal");
    let journal = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/4t5i-shard7of64.journal"
    );
    std::fs::copy(journal, dir.join("o.axb.gz.journal")).unwrap();
    let o = ok(synth(
        &dir,
        &[
            "-t", "4", "-i", "5", "--shard", "7/64", "-o", "o.axb.gz", "--resume",
        ],
    ));
    assert!(stderr(&o).contains("resuming: 3 of"), "{}", stderr(&o));
    assert_eq!(fnv(&dir.join("o.axb.gz")), 0x5e0857f3b99224cd);
    let _ = std::fs::remove_dir_all(&dir);
}
