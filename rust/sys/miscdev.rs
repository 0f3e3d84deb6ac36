// SPDX-License-Identifier: GPL-2.0
//! Misc character devices, in the shape of the `miscdevice` abstraction of later
//! kernels (6.12 has none).
//!
//! A type implementing [`MiscFile`] is created on every `open()` and owned by the
//! file until `release()`; the other file operations borrow it. Registration goes
//! through `srnic_misc_register()` in the C glue, which also sets the file
//! operations' owner so that an open file pins the module.

use super::shared::Vma;
use super::waitqueue::{PollMask, PollTable};
use core::marker::PhantomData;
use kernel::{
    bindings,
    error::{from_err_ptr, from_result, to_result},
    ffi::{c_char, c_int, c_long, c_uint, c_ulong},
    prelude::*,
    str::CStr,
    types::ForeignOwnable,
    uaccess::{UserSlice, UserSliceReader, UserSliceWriter},
};

/// `struct miscdevice`, opaque here: only the C glue looks inside it.
#[repr(C)]
struct RawMiscDevice {
    _opaque: [u8; 0],
}

extern "C" {
    fn srnic_misc_register(
        name: *const c_char,
        mode: bindings::umode_t,
        // `struct file_operations`, passed through as `void *`: some
        // configurations leave the Rust view of its `owner` module without
        // fields, which the FFI-safety lint rejects.
        fops: *const core::ffi::c_void,
    ) -> *mut RawMiscDevice;
    fn srnic_misc_deregister(misc: *mut RawMiscDevice);
}

/// The per-open state of a misc device and its file operations.
pub trait MiscFile: Sized + Send + Sync + 'static {
    /// Called on `open()`; the returned value lives until the file is released.
    fn open() -> Result<Pin<KBox<Self>>>;
    /// `unlocked_ioctl`: returns the non-negative result or an error.
    fn ioctl(&self, cmd: u32, arg: usize) -> Result<isize>;
    /// `read()` into `buf`; `nonblock` is `O_NONBLOCK`. Returns the bytes written.
    fn read(&self, buf: &mut UserSliceWriter, nonblock: bool) -> Result<usize>;
    /// `write()` from `buf`; `nonblock` is `O_NONBLOCK`. Returns the bytes consumed.
    fn write(&self, buf: &mut UserSliceReader, nonblock: bool) -> Result<usize>;
    /// `poll()`: registers wait queues on `table` and returns what is ready now.
    fn poll(&self, table: &PollTable) -> PollMask;
    /// `mmap()`: maps what `vma`'s offset names into it.
    fn mmap(&self, vma: &Vma<'_>) -> Result;
}

/// A registered misc device; deregistered on drop.
///
/// # Invariants
///
/// `misc` was returned by a successful `srnic_misc_register()` and is not yet
/// deregistered.
pub struct Registration<T: MiscFile> {
    misc: *mut RawMiscDevice,
    _t: PhantomData<T>,
}

// SAFETY: the registration is only a handle; misc_deregister() may be called from
// any thread.
unsafe impl<T: MiscFile> Send for Registration<T> {}
// SAFETY: `&Registration` offers no operations.
unsafe impl<T: MiscFile> Sync for Registration<T> {}

impl<T: MiscFile> Registration<T> {
    /// Registers `/dev/<name>` with the given mode and a dynamic minor.
    pub fn register(name: &'static CStr, mode: u16) -> Result<Self> {
        // SAFETY: `name` is static; `VTABLE` is a static promoted constant, copied by
        // the glue before it returns.
        // `srnic_misc_register()` returns an ERR_PTR on failure.
        let misc = from_err_ptr(unsafe {
            srnic_misc_register(name.as_char_ptr(), mode, (&Self::VTABLE as *const bindings::file_operations).cast())
        })?;
        // INVARIANT: registration succeeded.
        Ok(Self {
            misc,
            _t: PhantomData,
        })
    }

    const VTABLE: bindings::file_operations = bindings::file_operations {
        open: Some(open::<T>),
        release: Some(release::<T>),
        read: Some(read::<T>),
        write: Some(write::<T>),
        poll: Some(poll::<T>),
        unlocked_ioctl: Some(ioctl::<T>),
        mmap: Some(mmap::<T>),
        // SAFETY: all-zero is a valid `file_operations` (every member is an
        // optional function pointer or a plain integer/pointer).
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };
}

impl<T: MiscFile> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: by the type invariant `misc` is registered; it is not used again.
        unsafe { srnic_misc_deregister(self.misc) };
    }
}

/// # Safety
///
/// Called by the VFS with a valid `file` whose private data srnic owns.
unsafe fn borrow<'a, T: MiscFile>(file: *mut bindings::file) -> Pin<&'a T> {
    // SAFETY: `open` stored a `Pin<KBox<T>>` in `private_data`; it is released only
    // in `release`, after every other file operation has returned.
    unsafe { <Pin<KBox<T>> as ForeignOwnable>::borrow((*file).private_data) }
}

/// # Safety
///
/// `file` is a valid file being operated on.
unsafe fn nonblock(file: *mut bindings::file) -> bool {
    // SAFETY: the caller guarantees `file` is valid.
    unsafe { (*file).f_flags & bindings::O_NONBLOCK != 0 }
}

unsafe extern "C" fn open<T: MiscFile>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    from_result(|| {
        let this = T::open()?;
        // SAFETY: the VFS passes a valid inode and file; the file is not seekable.
        to_result(unsafe { bindings::nonseekable_open(inode, file) })?;
        // SAFETY: `file` is valid and not yet visible to any other file operation.
        unsafe { (*file).private_data = this.into_foreign() as *mut _ };
        Ok(0)
    })
}

unsafe extern "C" fn release<T: MiscFile>(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `private_data` holds what `open` stored and nothing uses it after
    // `release`.
    drop(unsafe { <Pin<KBox<T>> as ForeignOwnable>::from_foreign((*file).private_data) });
    0
}

unsafe extern "C" fn ioctl<T: MiscFile>(
    file: *mut bindings::file,
    cmd: c_uint,
    arg: c_ulong,
) -> c_long {
    // SAFETY: called by the VFS on an open file.
    let this = unsafe { borrow::<T>(file) };
    from_result(|| this.ioctl(cmd, arg as usize))
}

unsafe extern "C" fn read<T: MiscFile>(
    file: *mut bindings::file,
    buf: *mut c_char,
    len: usize,
    _pos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: called by the VFS on an open file.
    let (this, nonblock) = unsafe { (borrow::<T>(file), nonblock(file)) };
    let mut w = UserSlice::new(buf as usize, len).writer();
    from_result(|| Ok(this.read(&mut w, nonblock)? as isize))
}

unsafe extern "C" fn write<T: MiscFile>(
    file: *mut bindings::file,
    buf: *const c_char,
    len: usize,
    _pos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: called by the VFS on an open file.
    let (this, nonblock) = unsafe { (borrow::<T>(file), nonblock(file)) };
    let mut r = UserSlice::new(buf as usize, len).reader();
    from_result(|| Ok(this.write(&mut r, nonblock)? as isize))
}

unsafe extern "C" fn poll<T: MiscFile>(
    file: *mut bindings::file,
    pt: *mut bindings::poll_table_struct,
) -> bindings::__poll_t {
    // SAFETY: called by the VFS on an open file with its poll table.
    let (this, table) = unsafe { (borrow::<T>(file), PollTable::new(file, pt)) };
    this.poll(&table).0
}

unsafe extern "C" fn mmap<T: MiscFile>(
    file: *mut bindings::file,
    vma: *mut bindings::vm_area_struct,
) -> c_int {
    // SAFETY: called by the VFS on an open file, with the VMA being set up
    // (valid until this returns).
    let (this, vma) = unsafe { (borrow::<T>(file), Vma::from_raw(vma)) };
    from_result(|| {
        this.mmap(&vma)?;
        Ok(0)
    })
}
