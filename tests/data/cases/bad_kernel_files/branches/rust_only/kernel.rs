// No registered toolchain builds Rust.
#[no_mangle]
pub extern "C" fn solve(x: *const f32, y: *mut f32, n: i32) {}
