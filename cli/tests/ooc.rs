//! `convert --memory-limit`: out-of-core conversion through the CLI gives
//! the in-memory path's bytes in every container, refuses what it cannot
//! write, and leaves
//! nothing behind on an error or a signal; `gen --stream` writes what
//! `gen` writes.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{ok, st, stderr};

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

/// Runs `sparsetool` with the words of `cmd` (paths without spaces).
fn run(cmd: &str) -> std::process::Output {
    st(&cmd.split_whitespace().collect::<Vec<_>>())
}

/// `convert INPUT --to csr -o OUT MORE`.
fn to_csr(input: &Path, out: &Path, more: &str) -> std::process::Output {
    run(&format!(
        "convert {} --to csr -o {} {more}",
        input.display(),
        out.display()
    ))
}

/// `convert - --to csr -o OUT --memory-limit LIMIT` reading `input` on
/// standard input.
fn csr_from_stdin(input: &Path, out: &Path, limit: &str) -> std::process::Output {
    let args = format!(
        "convert - --to csr -o {} --memory-limit {limit}",
        out.display()
    );
    Command::new(env!("CARGO_BIN_EXE_sparsetool"))
        .args(args.split_whitespace())
        .stdin(std::fs::File::open(input).unwrap())
        .output()
        .unwrap()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `convert INPUT --to FMT` into a `.EXT` file in `dir`, in memory and
/// out of core (64 KiB, scratch files in `scratch`): the same bytes.
fn same_both_ways(input: &str, fmt: &str, ext: &str, dir: &Path, scratch: &Path) {
    let tag = fmt.replace([' ', '-'], "_");
    let a = dir.join(format!("{tag}-mem.{ext}"));
    let b = dir.join(format!("{tag}-ooc.{ext}"));
    let common = format!("convert {input} --to {fmt} --force -o");
    let o = run(&format!("{common} {}", a.display()));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&format!(
        "{common} {} --memory-limit 64K --tmp-dir {} --timings",
        b.display(),
        scratch.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("convert (out of core)"),
        "{}",
        stderr(&o)
    );
    let (x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(x == y, "{input} to {fmt} as .{ext}: the files differ");
}

/// [`same_both_ways`] for every input and `(format, extension)` pair but
/// those `skip` names, then no scratch file left behind.
fn all_same_both_ways(inputs: &[&str], cases: &[(&str, &str)], skip: impl Fn(&str, &str) -> bool) {
    let d = tmp();
    let scratch = tmp();
    for input in inputs {
        for &(fmt, ext) in cases {
            if !skip(input, fmt) {
                same_both_ways(input, fmt, ext, d.path(), scratch.path());
            }
        }
    }
    assert!(entries(scratch.path()).is_empty());
}

#[test]
fn out_of_core_files_equal_in_memory_ones() {
    let formats = [
        "csr",
        "csc",
        "coo",
        "ell --allow-fill",
        "hyb",
        "hyb --hyb-width 3",
        "jds",
        "sell",
        "sell --slice 8 --sigma 64",
    ];
    all_same_both_ways(
        &[
            "fixtures/matrices/real/bcsstk13.mtx.gz",
            "fixtures/matrices/real/arrow.mtx.gz",
            "fixtures/matrices/real/lp_ship04l.mtx",
        ],
        &formats.map(|fmt| (fmt, "spb")),
        // arrow's dense row makes 46500^2 ELL slots: too many for i32.
        |input, fmt| input.contains("arrow") && fmt.starts_with("ell"),
    );
}

/// `.npz`, `.mtx` and `.mtx.gz` outputs out of core: the in-memory
/// bytes, Matrix Market storage (`--symmetry`) and comments included.
#[test]
fn every_container_out_of_core_equals_in_memory() {
    all_same_both_ways(
        &[
            "fixtures/matrices/real/bcsstk13.mtx.gz",
            "fixtures/matrices/real/lp_ship04l.mtx",
        ],
        &[
            ("csr", "npz"),
            ("coo", "npz"),
            ("sell --slice 8 --sigma 64", "npz"),
            ("hyb", "npz"),
            ("csc", "mtx"),
            ("coo", "mtx"),
            ("coo --symmetry general", "mtx"),
            ("jds", "mtx.gz"),
            ("csr --symmetry general", "mtx.gz"),
        ],
        |_, _| false,
    );
}

#[test]
fn standard_input_goes_out_of_core_too() {
    let d = tmp();
    let input = common::root().join("fixtures/matrices/real/bcsstk13.mtx.gz");
    let a = d.path().join("a.spb");
    let b = d.path().join("b.spb");
    assert!(to_csr(&input, &a, "--force").status.success());
    let o = csr_from_stdin(&input, &b, "100K");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(entries(d.path()), ["a.spb", "b.spb"]);
}

#[test]
fn what_cannot_be_done_out_of_core_is_a_usage_error() {
    let d = tmp();
    let m = "fixtures/matrices/real/bcsstk13.mtx.gz";
    // Standard output: the scratch files need a directory.
    let o = run(&format!("convert {m} --to csr -o - --memory-limit 100K"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("give -o FILE") && e.contains("--memory-limit"),
        "{e}"
    );
    assert!(e.contains("bcsstk13.mtx.gz"), "{e}");
    assert!(o.stdout.is_empty());
    // A width that does not fit is found once the rows are built: the
    // same message as in memory, naming the file.
    let out = d.path().join("narrow.spb");
    let o = run(&format!(
        "convert {m} --to ell --ell-width 2 -o {} --memory-limit 100K",
        out.display()
    ));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let mem = run(&format!(
        "convert {m} --to ell --ell-width 2 -o {}",
        out.display()
    ));
    assert_eq!(stderr(&o), stderr(&mem));
    assert!(stderr(&o).contains("bcsstk13.mtx.gz"), "{}", stderr(&o));
    for bad in ["12Q", "", "-5M", "1K"] {
        let o = st(&[
            "convert",
            m,
            "--to",
            "csr",
            "-o",
            "x.spb",
            "--memory-limit",
            bad,
        ]);
        assert_eq!(o.status.code(), Some(1), "{bad}: {}", stderr(&o));
    }
    assert!(entries(d.path()).is_empty());
}

#[test]
fn an_error_late_in_the_input_leaves_nothing() {
    let d = tmp();
    let mut text = String::from("%%MatrixMarket matrix coordinate real general\n500 500 20000\n");
    for k in 0..19_999 {
        text.push_str(&format!("{} {} 1.5\n", k % 500 + 1, k % 499 + 1));
    }
    text.push_str("501 1 2.0\n");
    let input = d.path().join("late.mtx");
    std::fs::write(&input, text).unwrap();
    let out = d.path().join("out.spb");
    let o = to_csr(&input, &out, "--memory-limit 100K");
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("late.mtx:20002"), "{e}");
    assert_eq!(entries(d.path()), ["late.mtx"]);
}

#[test]
fn too_little_disk_is_refused_up_front() {
    // No disk holds the buckets of a declared 10^12 entries.
    let d = tmp();
    let input = d.path().join("huge.mtx");
    std::fs::write(
        &input,
        "%%MatrixMarket matrix coordinate real general\n1000000 1000000 1000000000000\n1 1 1\n",
    )
    .unwrap();
    let out = d.path().join("out.spb");
    // On standard input (its size unknown), the declared count is believed.
    let o = csr_from_stdin(&input, &out, "1G");
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("not enough disk space") && e.contains("needs about"),
        "{e}"
    );
    assert_eq!(entries(d.path()), ["huge.mtx"]);
}

#[test]
fn a_signal_during_an_out_of_core_conversion_leaves_nothing() {
    for signal in ["INT", "TERM"] {
        use std::io::Write;
        let outdir = tmp();
        let out = outdir.path().join("out.spb");
        let args = format!(
            "convert - --to csr -o {} --memory-limit 128K",
            out.display()
        );
        // Only the exit status and the files left matter.
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sparsetool"));
        cmd.args(args.split_whitespace()).stdin(Stdio::piped());
        let mut child = cmd.stderr(Stdio::null()).spawn().expect("spawn");
        let mut input = child.stdin.take().expect("stdin");
        let declared = 400_000;
        let mut text =
            format!("%%MatrixMarket matrix coordinate real general\n1000 1000 {declared}\n");
        for k in 0..declared / 2 {
            text.push_str(&format!("{} {} 1.5\n", k % 1000 + 1, k % 997 + 1));
        }
        input
            .write_all(text.as_bytes())
            .expect("the process reads its input");
        // The scatter pass is under way: its scratch directory exists.
        let t = std::time::Instant::now();
        while !entries(outdir.path())
            .iter()
            .any(|e| e.starts_with(".sparsetool-ooc-"))
        {
            assert!(
                t.elapsed().as_secs() < 30,
                "no scratch directory: {:?}",
                entries(outdir.path())
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let kill = format!("kill -{signal} {}", child.id());
        let sent = Command::new("sh").args(["-c", &kill]).status();
        assert!(sent.expect("kill runs").success());
        let o = child.wait_with_output().expect("wait");
        drop(input);
        assert_eq!(o.status.code(), Some(130), "SIG{signal}");
        assert!(entries(outdir.path()).is_empty(), "SIG{signal}: left files");
    }
}

#[test]
fn gen_stream_writes_what_gen_writes() {
    let d = tmp();
    let a = d.path().join("a.mtx");
    let b = d.path().join("b.mtx");
    let args: Vec<&str> = "gen uniform --rows 3000 --nnz-per-row 700 --seed 7"
        .split(' ')
        .collect();
    ok(&[&args[..], &["-o", a.to_str().unwrap()]].concat());
    ok(&[&args[..], &["-o", b.to_str().unwrap(), "--stream"]].concat());
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
    // gzip, and standard output.
    let gz = d.path().join("b.mtx.gz");
    ok(&[&args[..], &["-o", gz.to_str().unwrap(), "--stream"]].concat());
    let o = Command::new(env!("CARGO_BIN_EXE_sparsetool"))
        .args([&args[..], &["-o", "-", "--stream"]].concat())
        .output()
        .unwrap();
    assert_eq!(o.stdout, std::fs::read(&a).unwrap());
    let c = d.path().join("c.spb");
    let e = d.path().join("e.spb");
    for (from, to) in [(&gz, &c), (&a, &e)] {
        let o = to_csr(from, to, "");
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&c).unwrap(), std::fs::read(&e).unwrap());
    let l = d.path().join("l.mtx");
    let o = run(&format!(
        "gen laplace2d --rows 100 -o {} --stream",
        l.display()
    ));
    assert_eq!(o.status.code(), Some(1));
}
