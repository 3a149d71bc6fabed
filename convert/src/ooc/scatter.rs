//! Bucket files: entries `(major, minor, value)` appended to one file per
//! range of major indices (rows for CSR, columns for CSC), through one
//! bounded buffer per bucket, and read back in order.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use sparsetool_formats::{Index, Scalar};

use super::OocError;

/// Bytes of one record `(major, minor, value)`.
pub(super) fn record_size<T, I>() -> usize {
    2 * std::mem::size_of::<I>() + std::mem::size_of::<T>()
}

/// Equal ranges of major indices `lo + k * per ..`, one file each.
pub(super) struct Buckets {
    dir: PathBuf,
    tag: String,
    pub(super) lo: usize,
    pub(super) hi: usize,
    pub(super) per: usize,
    bufs: Vec<Vec<u8>>,
    cap: usize,
    /// Entries written per bucket.
    pub(super) counts: Vec<u64>,
}

impl Buckets {
    /// `n` buckets over majors `lo..hi` in `dir`, files named after `tag`,
    /// each buffered in `cap` bytes.
    pub(super) fn new(dir: &Path, tag: &str, lo: usize, hi: usize, n: usize, cap: usize) -> Self {
        let per = (hi - lo).div_ceil(n.max(1)).max(1);
        let n = (hi - lo).div_ceil(per).max(1);
        Self {
            dir: dir.to_path_buf(),
            tag: tag.to_string(),
            lo,
            hi,
            per,
            bufs: (0..n).map(|_| Vec::new()).collect(),
            cap: cap.max(4096),
            counts: vec![0; n],
        }
    }

    /// Number of buckets.
    pub(super) fn len(&self) -> usize {
        self.bufs.len()
    }

    /// The majors of bucket `k`.
    pub(super) fn range(&self, k: usize) -> (usize, usize) {
        let a = self.lo + k * self.per;
        (a, (a + self.per).min(self.hi))
    }

    /// The file of bucket `k`.
    pub(super) fn path(&self, k: usize) -> PathBuf {
        self.dir.join(format!("{}-{k}.bin", self.tag))
    }

    /// Appends one entry (its major within `lo..hi`).
    #[inline]
    pub(super) fn push<T: Scalar, I: Index>(
        &mut self,
        major: I,
        minor: I,
        v: T,
    ) -> Result<(), OocError> {
        let k = (major.to_usize() - self.lo) / self.per;
        let b = &mut self.bufs[k];
        b.extend_from_slice(bytemuck::bytes_of(&major));
        b.extend_from_slice(bytemuck::bytes_of(&minor));
        b.extend_from_slice(bytemuck::bytes_of(&v));
        self.counts[k] += 1;
        if b.len() >= self.cap {
            self.flush(k)?;
        }
        Ok(())
    }

    fn flush(&mut self, k: usize) -> Result<(), OocError> {
        if self.bufs[k].is_empty() {
            return Ok(());
        }
        let path = self.path(k);
        if sparsetool_formats::io::interrupted() {
            // the scratch directory is being removed: add nothing to it
            return Err(OocError::io(
                &path,
                "cannot create",
                std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"),
            ));
        }
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| OocError::io(&path, "cannot create", e))?;
        f.write_all(&self.bufs[k])
            .map_err(|e| OocError::io(&path, "cannot write", e))?;
        self.bufs[k].clear();
        Ok(())
    }

    /// Writes out every buffer and frees them.
    pub(super) fn finish(&mut self) -> Result<(), OocError> {
        for k in 0..self.bufs.len() {
            self.flush(k)?;
            self.bufs[k] = Vec::new();
        }
        Ok(())
    }
}

/// Reads the records of `path` in order, in pieces of about `chunk`
/// bytes, handing each decoded record to `f`.
pub(super) fn read_records<T: Scalar, I: Index>(
    path: &Path,
    chunk: usize,
    mut f: impl FnMut(I, I, T) -> Result<(), OocError>,
) -> Result<(), OocError> {
    let rs = record_size::<T, I>();
    let si = std::mem::size_of::<I>();
    let mut file = match File::open(path) {
        Ok(f) => f,
        // A bucket that received nothing has no file.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(OocError::io(path, "cannot open", e)),
    };
    let mut buf = vec![0u8; (chunk / rs).max(1) * rs];
    loop {
        let n = sparsetool_formats::mm::read_up_to(&mut file, &mut buf)
            .map_err(|e| OocError::io(path, "cannot read", e))?;
        if n % rs != 0 {
            return Err(OocError::io(
                path,
                "cannot read",
                std::io::Error::other("truncated temporary file"),
            ));
        }
        for r in buf[..n].chunks_exact(rs) {
            let major: I = bytemuck::pod_read_unaligned(&r[..si]);
            let minor: I = bytemuck::pod_read_unaligned(&r[si..2 * si]);
            let v: T = bytemuck::pod_read_unaligned(&r[2 * si..]);
            f(major, minor, v)?;
        }
        if n < buf.len() {
            return Ok(());
        }
    }
}
