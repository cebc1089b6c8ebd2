//! Interrupts R has seen but not yet acted on. R's own signal handling keeps
//! them as a flag that the next interrupt check turns into an R interrupt
//! (`R_interrupts_pending` on all systems; on Windows, Ctrl-C in a console
//! sets `UserBreak`).

use std::os::raw::c_int;

extern "C" {
    static mut R_interrupts_pending: c_int;
    #[cfg(windows)]
    static mut UserBreak: c_int;
}

/// Whether an interrupt was pending; it is cleared either way, so it
/// interrupts nothing later.
pub fn take_interrupt() -> bool {
    // SAFETY: R's main thread (the only caller) owns these flags; reading and
    // clearing them between R evaluations is what R itself does.
    unsafe {
        let pending = R_interrupts_pending != 0;
        R_interrupts_pending = 0;
        #[cfg(windows)]
        let pending = {
            let user_break = UserBreak != 0;
            UserBreak = 0;
            pending || user_break
        };
        pending
    }
}
