//! The one integration-test binary: every test drives the real `mcpenv` in
//! a temporary HOME and project (see `harness`).

mod add;
mod approval;
mod check;
mod claude;
mod claude_add_json;
mod claude_blanked;
mod claude_launch;
mod claude_race;
mod clients;
mod conformance;
mod dotenvx;
mod exit_codes;
mod extract;
mod fake_op;
mod files;
mod get;
mod habits;
mod harness;
mod hostile_files;
mod import_clash;
mod interrupted;
mod keychain;
mod keychain_harness;
mod layout;
mod list;
mod monorepo;
mod no_leak;
mod oauth;
mod onboard;
mod peer_secrets;
mod pre_commit;
mod probe;
mod probe_everything;
mod probe_lifecycle;
mod realworld;
mod realworld_clients;
mod references;
mod remove;
mod run;
mod scan;
mod scan_sarif;
mod secrets;
mod secrets_corpus;
mod serve;
mod serve_crosscheck;
mod serve_gate;
mod teammate;
mod templates;
mod templates_schema;
mod terminal;
mod untrusted_text;
mod user_store;

#[path = "../support/big_config.rs"]
mod big_config;
