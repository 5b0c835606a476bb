fn main() -> std::process::ExitCode {
    mcpenv::cli::main()
}
