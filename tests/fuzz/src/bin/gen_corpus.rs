// SPDX-License-Identifier: GPL-2.0
//! Writes the seed corpus (`srnic_fuzz::seeds`) to `corpus/<target>/<name>` under the
//! directory given as the only argument (default: the current directory).

fn main() -> std::io::Result<()> {
    let root = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    for s in srnic_fuzz::seeds::all() {
        let dir = std::path::Path::new(&root).join("corpus").join(s.target);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(&s.name), &s.data)?;
        println!("{}/{} ({} bytes)", s.target, s.name, s.data.len());
    }
    Ok(())
}
