//! toolgate's cross-crate tests, one binary (link time on two cores).

mod bash_process;
mod content_rules;
mod db_neighbours;
mod differential;
mod file_identity;
mod file_tools;
mod fuzz_targets;
mod hook_commands;
mod hook_faults;
mod hooks_layers;
mod hooks_only;
mod hostile;
mod load;
mod pipeline_exits;
mod policy_decisions;
mod policy_files;
mod policy_props;
mod races;
mod read_memory;
mod sandbox;
mod search_tools;
mod session_layers;
mod shapes;
mod shell_paths;
mod turns;
