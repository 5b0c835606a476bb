// mimalloc rather than glibc's malloc: a scan allocates and frees small
// values on every core, where glibc grows each thread's arena a page at a
// time (a fault and often an `mprotect` per page). Measured on the
// release binary: `scan --json` of the bench corpus 315 → 247 ms, 14,300
// → 309 page faults (docs/src/speed.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    mcpenv::cli::main()
}
