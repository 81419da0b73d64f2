//! The machine's own tests: bit fields, permutations, and the semantics
//! of each mode on small programs.

mod bits {
    use super::super::*;

    #[test]
    fn bit_fields_cross_word_boundaries() {
        let mut s = [0u64; 3];
        set(&mut s, 60, 9, 0x1ab);
        assert_eq!(get(&s, 60, 9), 0x1ab);
        set(&mut s, 120, 12, 0xfff);
        assert_eq!(get(&s, 120, 12), 0xfff);
        assert_eq!(get(&s, 60, 9), 0x1ab);
        set(&mut s, 60, 9, 0);
        assert_eq!(s[0] >> 60, 0);
        assert_eq!(s[1] & 0x1f, 0);
        assert_eq!(get(&s, 120, 12), 0xfff);
    }

    #[test]
    fn permutations_cover_every_order() {
        let mut v = vec![0, 1, 2];
        let mut n = 1;
        while next_permutation(&mut v) {
            n += 1;
        }
        assert_eq!(n, 6);
        assert_eq!(bits_for(0), 1);
        assert_eq!(bits_for(7), 3);
        assert_eq!(bits_for(8), 4);
    }
}

mod semantics {
    use super::super::*;
    use crate::kernel::litmus;

    type S = [u64; 4];

    fn machine(src: &str, lockstep: bool) -> Machine {
        let mode = if lockstep {
            Mode::Lockstep
        } else {
            Mode::Interleaved
        };
        Machine::new(&litmus::parse(src).unwrap(), mode).unwrap()
    }

    fn init(m: &Machine) -> S {
        let mut s = S::default();
        m.init(&mut s);
        s
    }

    fn step(m: &Machine, s: &S, a: usize) -> Vec<(StepInfo, S)> {
        let mut out = Vec::new();
        m.steps(s, a, &mut out).unwrap();
        out
    }

    #[test]
    fn a_barrier_releases_when_the_last_invocation_arrives() {
        let m = machine(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nglobal x;\nkernel {\n  barrier();\n  x = 1;\n}\n",
            false,
        );
        let s0 = init(&m);
        let (_, s1) = step(&m, &s0, 0)[0];
        assert!(m.waiting(&s1, 0) && !m.can_step(&s1, 0));
        assert_eq!(m.describe(&s1), "x=0 pc=[0w,0]");
        let (_, s2) = step(&m, &s1, 1)[0];
        assert!(!m.waiting(&s2, 0) && !m.waiting(&s2, 1));
        assert_eq!((m.pc(&s2, 0), m.pc(&s2, 1)), (1, 1));
    }

    #[test]
    fn a_barrier_an_invocation_skips_never_releases() {
        let m = machine(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nkernel {\n  if (local_id == 1) goto END;\n  barrier();\n}\n",
            false,
        );
        let s = init(&m);
        let (_, s) = step(&m, &s, 1)[0];
        assert!(m.finished(&s, 1));
        let (_, s) = step(&m, &s, 0)[0];
        let (_, s) = step(&m, &s, 0)[0];
        assert!(m.waiting(&s, 0));
        assert!(!m.can_step(&s, 0) && !m.can_step(&s, 1));
        assert!(m.can_terminate(&s, 1) && !m.can_terminate(&s, 0));
    }

    #[test]
    fn atomics_wrap_and_faults_are_reported() {
        let m = machine(
            "values 4;\nworkgroups 1;\nglobal a[2] = {3, 0};\nkernel {\n  r = fetch_add(a[0], 2);\n  q = cas(a[1], 0, r);\n  p = a[r];\n}\n",
            false,
        );
        let s = init(&m);
        let (_, s) = step(&m, &s, 0)[0];
        assert_eq!((m.mem(&s, 0), m.reg(&s, 0, 0)), (1, 3));
        let (_, s) = step(&m, &s, 0)[0];
        assert_eq!((m.mem(&s, 1), m.reg(&s, 0, 1)), (3, 0));
        let mut out = Vec::new();
        let e = m.steps(&s, 0, &mut out).unwrap_err();
        assert!(e.msg.contains("index 3 is out of bounds"), "{e}");
    }

    #[test]
    fn interleaved_collectives_wait_for_the_whole_subgroup() {
        let m = machine(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nkernel {\n  r = subgroupAll(local_id);\n  q = subgroupBroadcastFirst(lane_id);\n}\n",
            false,
        );
        let s = init(&m);
        let (_, s) = step(&m, &s, 1)[0];
        assert!(m.waiting(&s, 1));
        let (_, s) = step(&m, &s, 0)[0];
        assert_eq!((m.reg(&s, 0, 0), m.reg(&s, 1, 0)), (0, 0));
        assert_eq!((m.pc(&s, 0), m.pc(&s, 1)), (1, 1));
    }

    #[test]
    fn lockstep_spin_lock_diverges_and_the_spinning_lanes_run_first() {
        // Both lanes exchange; one gets the lock. The loser loops while the
        // winner waits at the reconvergence point: the classic SIMT deadlock.
        let m = machine(
            "values 2;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal lock;\nkernel {\n  0: if (exch(lock, 1) == 1) goto 0;\n  1: lock = 0;\n}\n",
            true,
        );
        assert_eq!(m.num_actors(), 1);
        let s = init(&m);
        let succ = step(&m, &s, 0);
        // Two lane orders (who wins), each divergent with two stack orders
        // that give the same state (the winners' entry is at its
        // reconvergence point and is popped at once).
        assert_eq!(succ.len(), 2);
        for (info, t) in &succ {
            assert_eq!(info.branch, Branch::Divergent);
            let spinning: Vec<usize> = (0..2).filter(|&i| m.pc(t, i) == 0).collect();
            assert_eq!(spinning.len(), 1);
            // Only the loser runs, forever.
            let (_, u) = step(&m, t, 0)[0];
            assert_eq!(u, *t);
        }
    }

    #[test]
    fn lockstep_collectives_see_only_the_active_lanes() {
        let m = machine(
            "values 4;\nworkgroups 1;\nworkgroup_size 2;\nsubgroup_size 2;\nkernel {\n  0: if (lane_id == 0) goto 2;\n  1: goto END;\n  2: r = subgroupAll(1);\n  3: q = subgroupBroadcastFirst(lane_id);\n}\n",
            true,
        );
        let s = init(&m);
        let succ = step(&m, &s, 0);
        assert_eq!(succ.len(), 2);
        let (_, mut t) = succ.iter().find(|(i, _)| i.choice == 0).copied().unwrap();
        // Lane 0 (taken) runs first: the collective sees only lane 0.
        for _ in 0..2 {
            t = step(&m, &t, 0)[0].1;
        }
        assert_eq!((m.reg(&t, 0, 0), m.reg(&t, 0, 1)), (1, 0));
        assert!(m.finished(&t, 0));
        t = step(&m, &t, 0)[0].1;
        assert!(m.finished(&t, 1));
        assert!(!m.can_step(&t, 0));
    }

    /// Every state reachable from the initial one (terminating finished
    /// invocations too), at most `cap`.
    fn reachable(m: &Machine, cap: usize) -> Vec<S> {
        let mut seen = std::collections::HashSet::new();
        let mut work = vec![init(m)];
        let mut all = Vec::new();
        while let Some(s) = work.pop() {
            if all.len() >= cap || !seen.insert(s) {
                continue;
            }
            all.push(s);
            for a in 0..m.num_actors() {
                work.extend(step(m, &s, a).into_iter().map(|(_, t)| t));
            }
            for i in (0..m.num_invocations()).filter(|&i| m.can_terminate(&s, i)) {
                let mut t = s;
                m.terminate(&mut t, i);
                work.push(t);
            }
        }
        all
    }

    #[test]
    fn a_view_holds_what_the_accessors_read() {
        let src = "values 4;\nworkgroups 2;\nworkgroup_size 2;\nsubgroup_size 2;\nglobal x;\nkernel {\n  if (lane_id == 0) {\n    r = subgroupAll(1);\n  }\n  barrier();\n  r = x;\n  x = 1;\n  if (r != 0) {\n    q = subgroupAny(r);\n  }\n}\n";
        let p = litmus::parse(src).unwrap();
        let machines = [
            Machine::new(&p, Mode::Interleaved).unwrap(),
            Machine::new(&p, Mode::Lockstep).unwrap(),
            Machine::new(&p, Mode::Simt(Direct::Scf)).unwrap(),
        ];
        for m in &machines {
            let states = reachable(m, 5000);
            assert!(states.len() > 20, "{} states", states.len());
            for s in &states {
                let v = m.view(s);
                for i in 0..m.num_invocations() {
                    assert_eq!(v.pc[i] as usize, m.pc(s, i));
                    assert_eq!(v.terminated >> i & 1 != 0, m.terminated(s, i));
                    assert_eq!(v.waiting >> i & 1 != 0, m.waiting(s, i));
                    assert_eq!(v.finished >> i & 1 != 0, m.finished(s, i));
                    assert_eq!(v.can_terminate() >> i & 1 != 0, m.can_terminate(s, i));
                }
                assert_eq!(v.terminated, m.terminated_mask(s));
                for a in 0..m.num_actors() {
                    assert_eq!(v.steppable >> a & 1 != 0, m.can_step(s, a));
                    if m.can_step(s, a) {
                        let pc = m.stepping_instr(s, a).unwrap().0;
                        assert_eq!(v.next[a] as usize, pc);
                    }
                }
            }
        }
    }
}
