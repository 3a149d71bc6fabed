//! [`Buffer`]: the storage of a format's arrays — an owned `Vec`, or a typed
//! window into shared bytes (a memory-mapped `.spb` section), so that a
//! matrix opened from a `.spb` file is used in place, without a copy.
//!
//! Reading is the same for both (`Deref<Target = [T]>`); writing
//! ([`Buffer::make_mut`]) or taking the `Vec` ([`Buffer::into_vec`]) copies
//! a mapped buffer first (copy on write). Hand-written because the crates
//! that share a mapping as typed slices (`bytes`, `arrow-buffer`) bring
//! their own type systems; this is 100 lines over `memmap2` and `bytemuck`.

use std::sync::Arc;

/// Bytes that outlive every [`Buffer`] viewing them (a memory map, or an
/// aligned heap copy).
pub trait SharedBytes: Send + Sync + std::fmt::Debug {
    /// The bytes.
    fn bytes(&self) -> &[u8];
}

/// An array of `T`: owned, or a window of `len` values at byte `offset` of
/// shared bytes (aligned for `T`, checked when the window is made).
pub struct Buffer<T> {
    repr: Repr<T>,
}

enum Repr<T> {
    Owned(Vec<T>),
    Shared {
        bytes: Arc<dyn SharedBytes>,
        offset: usize,
        len: usize,
    },
}

impl<T: bytemuck::Pod> Buffer<T> {
    /// A window of `len` values at byte `offset` of `bytes` (only plain-old-
    /// data types: every bit pattern is a value, so any bytes read as `T`).
    ///
    /// # Errors
    /// A sentence when the window is out of bounds or not aligned for `T`.
    pub fn shared(bytes: Arc<dyn SharedBytes>, offset: usize, len: usize) -> Result<Self, String> {
        let size = std::mem::size_of::<T>();
        let end = len
            .checked_mul(size)
            .and_then(|n| n.checked_add(offset))
            .filter(|&e| e <= bytes.bytes().len())
            .ok_or_else(|| format!("{len} values at byte {offset} lie past the end"))?;
        bytemuck::try_cast_slice::<u8, T>(&bytes.bytes()[offset..end])
            .map_err(|e| format!("values at byte {offset} are not aligned: {e}"))?;
        Ok(Self {
            repr: Repr::Shared { bytes, offset, len },
        })
    }
}

impl<T: Clone> Buffer<T> {
    /// Whether the values are read in place from shared bytes (a mapped
    /// file) rather than owned.
    #[must_use]
    pub fn is_shared(&self) -> bool {
        matches!(self.repr, Repr::Shared { .. })
    }

    /// The values, writable: a shared buffer is copied into an owned one
    /// first.
    pub fn make_mut(&mut self) -> &mut [T] {
        if let Repr::Shared { .. } = self.repr {
            self.repr = Repr::Owned(self.to_vec());
        }
        match &mut self.repr {
            Repr::Owned(v) => v,
            Repr::Shared { .. } => &mut [],
        }
    }

    /// The values as a `Vec` (moved when owned, copied when shared).
    #[must_use]
    pub fn into_vec(self) -> Vec<T> {
        match self.repr {
            Repr::Owned(v) => v,
            Repr::Shared { .. } => self.to_vec(),
        }
    }
}

impl<T> std::ops::Deref for Buffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.repr {
            Repr::Owned(v) => v,
            Repr::Shared { bytes, offset, len } => {
                let b = &bytes.bytes()[*offset..*offset + *len * std::mem::size_of::<T>()];
                // SAFETY: a shared buffer exists only for `T: Pod` (any bit
                // pattern is a value), made by `Buffer::shared`, which
                // checked that the window lies inside the bytes and is
                // aligned for `T`; the bytes are immutable and live as long
                // as the Arc this buffer holds.
                unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<T>(), *len) }
            }
        }
    }
}

impl<T> From<Vec<T>> for Buffer<T> {
    fn from(v: Vec<T>) -> Self {
        Self {
            repr: Repr::Owned(v),
        }
    }
}

impl<T: Clone> From<Buffer<T>> for Vec<T> {
    fn from(b: Buffer<T>) -> Self {
        b.into_vec()
    }
}

impl<T: Clone> Clone for Buffer<T> {
    fn clone(&self) -> Self {
        Self {
            repr: match &self.repr {
                Repr::Owned(v) => Repr::Owned(v.clone()),
                Repr::Shared { bytes, offset, len } => Repr::Shared {
                    bytes: Arc::clone(bytes),
                    offset: *offset,
                    len: *len,
                },
            },
        }
    }
}

impl<T: PartialEq> PartialEq for Buffer<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if matches!(self.repr, Repr::Shared { .. }) {
            write!(f, "(mapped) ")?;
        }
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Bytes(Vec<u64>);
    impl SharedBytes for Bytes {
        fn bytes(&self) -> &[u8] {
            bytemuck::cast_slice(&self.0)
        }
    }

    #[test]
    fn shared_and_owned_read_the_same() {
        let shared: Arc<dyn SharedBytes> = Arc::new(Bytes(vec![1, 2, 3, 4]));
        let b = Buffer::<u32>::shared(Arc::clone(&shared), 8, 4).unwrap();
        assert!(b.is_shared());
        assert_eq!(&*b, &[2, 0, 3, 0]);
        assert_eq!(b, Buffer::from(vec![2u32, 0, 3, 0]));
        let mut c = b.clone();
        c.make_mut()[0] = 9;
        assert!(!c.is_shared());
        assert_eq!(&*c, &[9, 0, 3, 0]);
        assert_eq!(&*b, &[2, 0, 3, 0], "the mapping is never written");
        assert_eq!(b.into_vec(), vec![2, 0, 3, 0]);
        assert!(Buffer::<u32>::shared(Arc::clone(&shared), 30, 1).is_err());
        assert!(Buffer::<u64>::shared(Arc::clone(&shared), 4, 1).is_err());
        assert!(Buffer::<u32>::shared(shared, 0, usize::MAX).is_err());
    }
}
