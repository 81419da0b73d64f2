//! `target::test_sources` shows exactly what `backends emit` writes.

use backends::mapping::Mapping;
use backends::target::emit::{files, EmitOptions, Target};
use backends::target::{test_sources, Shape};
use progress_litmus::axb::load::load_file;
use std::path::PathBuf;

#[test]
fn sources_are_the_emitted_texts() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/oopsla21/tests/3t4i_34.txt");
    let tests = load_file(&path).unwrap();
    for shape in [Shape::Switch, Shape::IfChain] {
        let sources = test_sources(&tests[0], shape).unwrap();
        assert_eq!(sources.len(), 4 * 3 + 2);
        for target in [
            Target::Glsl,
            Target::Amber,
            Target::Metal,
            Target::Wgsl,
            Target::Cuda,
            Target::Cpp,
        ] {
            let opts = EmitOptions {
                target,
                mappings: Mapping::ALL.to_vec(),
                instances: None,
                shape,
                deadline_ms: 20_000,
                program_name: "tests".into(),
                bare: false,
            };
            let emitted = files(&tests, &opts).unwrap();
            for s in sources.iter().filter(|s| s.target == target) {
                match s.mapping {
                    Some(m) => {
                        let f = emitted
                            .iter()
                            .find(|f| f.path.to_string_lossy().contains(&format!(".{m}.")))
                            .unwrap();
                        assert_eq!(f.contents, s.text, "{target:?} {m}");
                    }
                    None => {
                        let body = s.text.lines().skip(2).collect::<Vec<_>>().join("\n");
                        assert!(emitted[0].contents.contains(&body), "{target:?}");
                    }
                }
            }
        }
    }
}
