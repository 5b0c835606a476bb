//! `mcpenv onboard` through a real pseudo-terminal (being written).
