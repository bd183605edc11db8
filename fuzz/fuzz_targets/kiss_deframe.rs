#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    taroc_fuzz::kiss_deframe(data);
});
