// Embedded data (include_dir!) only tracks files that existed at the last build; ask cargo to
// rebuild when anything under these folders changes, so new labs are never left out.
fn main() {
    println!("cargo:rerun-if-changed=labs");
    println!("cargo:rerun-if-changed=manifests/demo");
    println!("cargo:rerun-if-changed=kind-config.yaml");
}
