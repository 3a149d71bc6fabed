//! Mutation fuzzing that runs in CI (seconds, deterministic seeds from
//! proptest): valid `.mtx`, `.npz` and `.spb` files are damaged by random
//! byte edits, truncations and insertions, and `.npz` archives of every
//! layout are rebuilt with damaged arrays. Every reader must return
//! `Ok` or `Err`, never panic, and every `Ok` matrix must survive a CPU SpMV
//! (the checks are those of the libFuzzer targets in `fuzz/`, see
//! `fuzz_common`). `formats/tests/mm.rs` already feeds random bytes and
//! random header/entry combinations to the Matrix Market reader; this file
//! mutates complete valid files instead.

mod fuzz_common;

use std::io::Cursor;

use proptest::prelude::*;
use proptest::sample::Index as PIndex;
use sparsetool_fixtures::seed;
use sparsetool_formats::binary::write_spb;
use sparsetool_formats::mm::{write_coo, WriteOptions};
use sparsetool_formats::npz::{self, NpzWriter};
use sparsetool_formats::{Complex64, Coo, Csr, MatrixRef};

// ---------------------------------------------------------------- seeds

fn seed_mtx() -> Vec<Vec<u8>> {
    let mut general = Vec::new();
    write_coo(
        &mut general,
        &seed::C.coo::<f64, i32>().unwrap(),
        &WriteOptions::default(),
    )
    .unwrap();
    let texts: [&[u8]; 6] = [
        b"%%MatrixMarket matrix coordinate real symmetric\n% c\n4 4 4\n1 1 2.5\n3 1 -.5\n4 2 1e3\n4 4 7\n",
        b"%%MatrixMarket matrix coordinate complex hermitian\n3 3 3\n1 1 1.5 0\n2 1 1 2\n3 2 -1 .5\n",
        b"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 4\n3 1 -1\n",
        b"%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 1 4\n2 3 -7\n1 2 0\n",
        b"%%MatrixMarket matrix array real general\n% dense\n3 2\n1\n0\n2.5\n-1\n0\n3\n",
        b"%%MatrixMarket matrix array complex symmetric\n2 2\n1 0\n2 1\n3 -1\n",
    ];
    let mut out = vec![general];
    out.extend(texts.iter().map(|t| t.to_vec()));
    out
}

fn seed_npz() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut put = |f: &dyn Fn(&mut Cursor<Vec<u8>>)| {
        let mut c = Cursor::new(Vec::new());
        f(&mut c);
        out.push(c.into_inner());
    };
    put(&|c| npz::write_coo(c, &seed::C.coo::<f64, i32>().unwrap()).unwrap());
    put(&|c| npz::write_csr(c, &seed::C.csr::<f64, i32>().unwrap()).unwrap());
    put(&|c| npz::write_ell(c, &seed::C.ell_matrix::<f64, i32>().unwrap()).unwrap());
    put(&|c| npz::write_hyb(c, &seed::C.hyb_matrix::<f64, i32>().unwrap()).unwrap());
    put(&|c| npz::write_jds(c, &seed::C.jds_matrix::<f64, i32>().unwrap()).unwrap());
    put(&|c| npz::write_sell(c, &seed::C.sell_matrix::<f64, i32>().unwrap()).unwrap());
    out
}

fn seed_spb() -> Vec<Vec<u8>> {
    let (coo, csr, ell, hyb, jds, sell) = (
        seed::C.coo::<f64, i32>().unwrap(),
        seed::C.csr::<f64, i32>().unwrap(),
        seed::C.ell_matrix::<f64, i32>().unwrap(),
        seed::C.hyb_matrix::<f64, i32>().unwrap(),
        seed::C.jds_matrix::<f64, i32>().unwrap(),
        seed::C.sell_matrix::<f64, i32>().unwrap(),
    );
    let refs = [
        MatrixRef::Coo(&coo),
        MatrixRef::Csr(&csr),
        MatrixRef::Ell(&ell),
        MatrixRef::Hyb(&hyb),
        MatrixRef::Jds(&jds),
        MatrixRef::Sell(&sell),
    ];
    let mut out: Vec<Vec<u8>> = refs
        .iter()
        .map(|r| {
            let mut b = Vec::new();
            write_spb(&mut b, *r).unwrap();
            b
        })
        .collect();
    // Other value and index types.
    let (n, c, r, cl, v) = seed::C.coo::<f64, i32>().unwrap().into_parts();
    let z: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, -x)).collect();
    let wide = |a: Vec<i32>| a.into_iter().map(i64::from).collect::<Vec<i64>>();
    let cz = Coo::<Complex64, i64>::try_from_parts(n, c, wide(r), wide(cl), z).unwrap();
    let mut b = Vec::new();
    write_spb(&mut b, MatrixRef::Coo(&cz)).unwrap();
    out.push(b);
    let (n, c, p, ci, v) = seed::C.csr::<f64, i32>().unwrap().into_parts();
    let cf = Csr::<f32, i32>::try_from_parts(n, c, p, ci, v.iter().map(|&x| x as f32).collect())
        .unwrap();
    let mut b = Vec::new();
    write_spb(&mut b, MatrixRef::Csr(&cf)).unwrap();
    out.push(b);
    out
}

#[test]
fn seeds_are_valid() {
    use sparsetool_formats::binary::{SpbFile, SpbOptions};
    use sparsetool_formats::mm::{read_bytes, ReadOptions};
    for t in seed_mtx() {
        read_bytes::<Complex64, i32>(&t, "s.mtx", &ReadOptions::default()).unwrap();
    }
    for b in seed_npz() {
        npz::read_npz_bytes::<f64, i32>(b, "s.npz").unwrap();
    }
    for b in seed_spb() {
        SpbFile::from_bytes(&b, "s.spb", &SpbOptions::default()).unwrap();
        // The checksum fix-up is the identity on a valid file.
        assert_eq!(fuzz_common::fix_spb_checksums(&b).unwrap(), b);
    }
}

// ------------------------------------------------------------ mutations

/// One edit of a byte string; positions are fractions of the length.
#[derive(Debug, Clone)]
enum Edit {
    Set(PIndex, u8),
    FlipBit(PIndex, u8),
    Insert(PIndex, Vec<u8>),
    Delete(PIndex, usize),
    Truncate(PIndex),
    /// Overwrite 8 bytes with an interesting little-endian value (lengths,
    /// counts and offsets of the binary formats live in such words).
    Word(PIndex, u64),
    /// Copy a range over another place (duplicated lines, sections).
    Splice(PIndex, PIndex, usize),
}

fn interesting_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(2),
        Just(7),
        Just(63),
        Just(64),
        Just(128),
        Just(u64::from(u32::MAX)),
        Just(1 << 31),
        Just((1 << 31) - 1),
        Just(u64::MAX),
        Just(u64::MAX / 2),
        Just(i64::MAX as u64),
        Just(1 << 40),
        Just(u64::MAX - 63),
        any::<u64>(),
        0u64..1024,
    ]
}

fn edit(insertions: Vec<&'static [u8]>) -> impl Strategy<Value = Edit> {
    let ins = proptest::sample::select(insertions).prop_map(<[u8]>::to_vec);
    prop_oneof![
        3 => (any::<PIndex>(), any::<u8>()).prop_map(|(p, b)| Edit::Set(p, b)),
        2 => (any::<PIndex>(), 0u8..8).prop_map(|(p, b)| Edit::FlipBit(p, b)),
        2 => (any::<PIndex>(), prop_oneof![ins, proptest::collection::vec(any::<u8>(), 1..8)])
            .prop_map(|(p, s)| Edit::Insert(p, s)),
        2 => (any::<PIndex>(), 1usize..32).prop_map(|(p, n)| Edit::Delete(p, n)),
        1 => any::<PIndex>().prop_map(Edit::Truncate),
        2 => (any::<PIndex>(), interesting_u64()).prop_map(|(p, v)| Edit::Word(p, v)),
        1 => (any::<PIndex>(), any::<PIndex>(), 1usize..64).prop_map(|(a, b, n)| Edit::Splice(a, b, n)),
    ]
}

fn apply(mut b: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = b.len();
        let at = |p: &PIndex| if len == 0 { 0 } else { p.index(len) };
        match e {
            Edit::Set(p, v) if len > 0 => {
                let i = at(p);
                b[i] = *v;
            }
            Edit::FlipBit(p, bit) if len > 0 => {
                let i = at(p);
                b[i] ^= 1 << bit;
            }
            Edit::Insert(p, s) => {
                let i = if len == 0 { 0 } else { p.index(len + 1) };
                b.splice(i..i, s.iter().copied());
            }
            Edit::Delete(p, n) if len > 0 => {
                let i = at(p);
                b.drain(i..(i + n).min(len));
            }
            Edit::Truncate(p) => b.truncate(if len == 0 { 0 } else { p.index(len + 1) }),
            Edit::Word(p, v) if len >= 8 => {
                // 8-byte aligned: the binary layouts keep their fields there.
                let i = at(p) / 8 * 8;
                let i = i.min(len - 8);
                b[i..i + 8].copy_from_slice(&v.to_le_bytes());
            }
            Edit::Splice(a, c, n) if len > 0 => {
                let (s, d) = (at(a), at(c));
                let n = (*n).min(len - s).min(len - d);
                let chunk = b[s..s + n].to_vec();
                b[d..d + n].copy_from_slice(&chunk);
            }
            _ => {}
        }
    }
    b
}

/// Lines and tokens worth inserting into Matrix Market text.
const MTX_INSERTS: [&[u8]; 20] = [
    b"\n",
    b"% comment\n",
    b"1 1 1\n",
    b"0 0 0\n",
    b"4 5 9\n",
    b"-1 2 3\n",
    b"99999999999999999999 1 1\n",
    b"3 3 1e400\n",
    b"2 2 nan\n",
    b" 1 ",
    b"\t",
    b"\r\n",
    b"%%MatrixMarket matrix array real general\n",
    b"%%MatrixMarket matrix coordinate complex hermitian\n",
    b"0 4294967296\n",
    b"2147483648 2147483648 0\n",
    b"\xEF\xBB\xBF",
    b"\0",
    b".5e-3",
    b"%MatrixMarket matrix coordinate pattern symmetric\n",
];

/// Byte strings worth inserting into binary files.
const BIN_INSERTS: [&[u8]; 6] = [
    b"\0\0\0\0\0\0\0\0",
    b"\xff\xff\xff\xff\xff\xff\xff\xff",
    b"PK\x03\x04",
    b"\x93NUMPY\x01\x00",
    b"{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999,), }",
    b"SPBMTX\r\n",
];

fn mutated(
    seeds: Vec<Vec<u8>>,
    inserts: Vec<&'static [u8]>,
    max_edits: usize,
) -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::sample::select(seeds),
        proptest::collection::vec(edit(inserts), 1..max_edits),
    )
        .prop_map(|(s, e)| apply(s, &e))
}

// -------------------------------------------------- structured .npz

/// One array of an archive.
#[derive(Debug, Clone)]
enum Arr {
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    U8(Vec<u8>),
}

impl Arr {
    fn len(&self) -> usize {
        match self {
            Arr::I32(v) => v.len(),
            Arr::I64(v) => v.len(),
            Arr::F64(v) => v.len(),
            Arr::U8(v) => v.len(),
        }
    }
}

/// The arrays of an archive by name (the `format` tag is an array too).
type Arrays = Vec<(String, Arr)>;

/// The arrays of the seed matrix in every `.npz` layout, recovered from
/// the writers' output.
fn seed_arrays() -> Vec<(String, Arrays)> {
    seed_npz()
        .into_iter()
        .map(|bytes| {
            let mut a = npz::NpzArchive::from_bytes(bytes, "s.npz").unwrap();
            let tag = a.format_tag().unwrap();
            let mut arrays = Vec::new();
            for name in a.names() {
                if name == "format" {
                    continue;
                }
                let h = a.array_header(&name).unwrap();
                let arr = if h.descr.contains('f') {
                    Arr::F64(a.value_array::<f64>(&name).unwrap())
                } else {
                    Arr::I64(a.index_array::<i64>(&name).unwrap())
                };
                arrays.push((name, arr));
            }
            (tag, arrays)
        })
        .collect()
}

fn small_ints() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => -2i64..12,
        1 => Just(i64::from(i32::MAX)),
        1 => Just(i64::from(i32::MAX) + 1),
        1 => Just(i64::MAX),
        1 => Just(i64::MIN),
        1 => Just(1i64 << 32),
    ]
}

fn arr() -> impl Strategy<Value = Arr> {
    let v = || proptest::collection::vec(small_ints(), 0..14);
    prop_oneof![
        4 => v().prop_map(|a| Arr::I32(a.into_iter().map(|x| x as i32).collect())),
        3 => v().prop_map(Arr::I64),
        3 => proptest::collection::vec(-2.0f64..10.0, 0..14).prop_map(Arr::F64),
        1 => proptest::collection::vec(any::<u8>(), 0..14).prop_map(Arr::U8),
    ]
}

/// A change to a valid archive's arrays.
#[derive(Debug, Clone)]
enum Damage {
    /// Replace an array by an arbitrary one.
    Replace(PIndex, Arr),
    /// Set one element of an integer array.
    Poke(PIndex, PIndex, i64),
    /// Leave an array out.
    Drop(PIndex),
    /// Append an element to an array.
    Grow(PIndex, i64),
    /// Store an array with another integer width (int32 <-> int64).
    Retype(PIndex),
    /// Claim another format.
    Tag(&'static str),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        2 => (any::<PIndex>(), arr()).prop_map(|(p, a)| Damage::Replace(p, a)),
        5 => (any::<PIndex>(), any::<PIndex>(), small_ints()).prop_map(|(p, q, v)| Damage::Poke(p, q, v)),
        1 => any::<PIndex>().prop_map(Damage::Drop),
        2 => (any::<PIndex>(), small_ints()).prop_map(|(p, v)| Damage::Grow(p, v)),
        1 => any::<PIndex>().prop_map(Damage::Retype),
        1 => proptest::sample::select(vec!["csr", "csc", "coo", "ell", "hyb", "jds", "sell", "bsr"])
            .prop_map(Damage::Tag),
    ]
}

fn damaged(mut tag: String, mut arrays: Arrays, ds: &[Damage]) -> Vec<u8> {
    for d in ds {
        let n = arrays.len();
        if n == 0 {
            break;
        }
        match d {
            Damage::Replace(p, a) => arrays[p.index(n)].1 = a.clone(),
            Damage::Poke(p, q, v) => match &mut arrays[p.index(n)].1 {
                Arr::I64(a) if !a.is_empty() => {
                    let k = q.index(a.len());
                    a[k] = *v;
                }
                Arr::I32(a) if !a.is_empty() => {
                    let k = q.index(a.len());
                    a[k] = *v as i32;
                }
                _ => {}
            },
            Damage::Drop(p) => {
                arrays.remove(p.index(n));
            }
            Damage::Grow(p, v) => match &mut arrays[p.index(n)].1 {
                Arr::I64(a) => a.push(*v),
                Arr::I32(a) => a.push(*v as i32),
                Arr::F64(a) => a.push(*v as f64),
                Arr::U8(a) => a.push(*v as u8),
            },
            Damage::Retype(p) => {
                let a = &mut arrays[p.index(n)].1;
                let retyped = match &*a {
                    Arr::I64(v) => Arr::I32(v.iter().map(|&x| x as i32).collect()),
                    Arr::I32(v) => Arr::I64(v.iter().map(|&x| i64::from(x)).collect()),
                    other => other.clone(),
                };
                *a = retyped;
            }
            Damage::Tag(t) => tag = (*t).to_string(),
        }
    }
    let mut z = NpzWriter::new(Cursor::new(Vec::new()));
    z.add_format_tag(&tag).unwrap();
    for (name, a) in &arrays {
        // Scalars (width, sigma, ...) stay 0-d arrays while they hold one
        // element, as the writers store them.
        let shape = if a.len() == 1 && !["shape", "data", "row_nnz"].contains(&name.as_str()) {
            vec![]
        } else {
            vec![a.len()]
        };
        match a {
            Arr::I32(v) => z.add_array(name, &shape, v),
            Arr::I64(v) => z.add_array(name, &shape, v),
            Arr::F64(v) => z.add_array(name, &shape, v),
            Arr::U8(v) => z.add_array(name, &shape, v),
        }
        .unwrap();
    }
    z.finish().unwrap().into_inner()
}

/// Valid archives of every layout with one to three arrays damaged.
fn structured_npz() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::sample::select(seed_arrays()),
        proptest::collection::vec(damage(), 1..4),
    )
        .prop_map(|((tag, arrays), ds)| damaged(tag, arrays, &ds))
}

// ----------------------------------------------------------- properties

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// (a) Damaged Matrix Market text, strict and lenient.
    #[test]
    fn mtx_mutations_never_panic(b in mutated(seed_mtx(), MTX_INSERTS.to_vec(), 4)) {
        fuzz_common::fuzz_mm(&b);
    }

    /// (b) Damaged `.npz` archives (byte level).
    #[test]
    fn npz_mutations_never_panic(b in mutated(seed_npz(), BIN_INSERTS.to_vec(), 5)) {
        fuzz_common::fuzz_npz(&b);
    }

    /// (b) `.npz` archives of every layout with damaged arrays: the length,
    /// pointer, index and scalar checks of every format tag.
    #[test]
    fn npz_structured_never_panics(b in structured_npz()) {
        fuzz_common::fuzz_npz(&b);
    }

    /// (c) Damaged `.spb` files, with checksum verification, without it,
    /// and with the header/table checksums recomputed so the structural
    /// checks see the damage (inside `fuzz_spb`).
    #[test]
    fn spb_mutations_never_panic(b in mutated(seed_spb(), BIN_INSERTS.to_vec(), 5)) {
        fuzz_common::fuzz_spb(&b);
    }
}

/// The fix-up really lets damage through to the structural checks: a
/// row-pointer word of a CSR file set out of range is rejected by the
/// pointer check, not by a checksum.
#[test]
fn spb_fixup_reaches_structural_checks() {
    use sparsetool_formats::binary::{SpbFile, SpbOptions};
    let mut b = seed_spb()[1].clone();
    let f = SpbFile::from_bytes(&b, "s.spb", &SpbOptions::default()).unwrap();
    let s = f
        .sections()
        .iter()
        .find(|s| s.name == "row_ptr")
        .unwrap()
        .clone();
    let at = s.offset as usize + 4; // row_ptr[1] (i32)
    b[at..at + 4].copy_from_slice(&100i32.to_le_bytes());
    let opts = SpbOptions {
        verify_checksums: false,
    };
    let f = SpbFile::from_bytes(&b, "s.spb", &opts).unwrap();
    let e = f.to_matrix::<f64, i32>().unwrap_err().to_string();
    assert!(e.contains("row_ptr"), "{e}");
    // A header field changed: rejected by the header checksum as is,
    // reaches the dimension checks once the checksums are recomputed.
    b[32..40].copy_from_slice(&u64::MAX.to_le_bytes()); // nrows
    let e = SpbFile::from_bytes(&b, "s.spb", &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("header checksum"), "{e}");
    let fixed = fuzz_common::fix_spb_checksums(&b).unwrap();
    let f = SpbFile::from_bytes(&fixed, "s.spb", &opts).unwrap();
    let e = f.to_matrix::<f64, i32>().unwrap_err().to_string();
    assert!(e.contains("nrows"), "{e}");
}
