//! Test host for the Luau and Lua 5.1 modules under `lua/` at the repository root.
//!
//! - [`LuauHost`]: an embedded Luau VM (mlua, built from source), sandboxed as Roblox runs
//!   scripts, with the Roblox stand-ins of `luahost/luau/roblox_standins.luau` (Vector3,
//!   CFrame) as globals and the modules of `lua/luau/` loaded as Roblox ModuleScripts:
//!   each sees `script.Parent.<name>` and a `require` that returns the module of that name.
//! - [`lua51`]: Lua 5.1 runs as the system's `lua5.1` interpreter in a child process (mlua
//!   builds exactly one Lua per build, and the workspace's build is Luau). Tests that need it
//!   call [`lua51::interpreter`], which skips with a message when it is missing, or fails
//!   when `CI=true`.
//!
//! The cross-tests themselves live in `luahost/tests/`.

pub mod tree;

use mlua::{Function, Lua, Table, Value};
use std::path::{Path, PathBuf};

/// The repository root (the folder holding `lua/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("luahost sits in the repository root")
        .to_path_buf()
}

/// The folder of the Luau modules, `lua/luau/`.
pub fn luau_dir() -> PathBuf {
    repo_root().join("lua").join("luau")
}

/// The folder of the Lua 5.1 modules, `lua/lua51/`.
pub fn lua51_dir() -> PathBuf {
    repo_root().join("lua").join("lua51")
}

/// The Luau modules [`LuauHost::new`] loads, in dependency order.
pub const LUAU_MODULES: [&str; 3] = ["statepack", "snap_cframe", "rply_xform"];

/// A sandboxed Luau VM with the `lua/luau/` modules loaded.
pub struct LuauHost {
    /// The VM.
    pub lua: Lua,
    loaded: Table,
    folder: Table,
    require: Function,
}

impl LuauHost {
    /// Creates the VM, turns the sandbox on, installs the Roblox stand-ins and loads every
    /// module of [`LUAU_MODULES`]. Errors: a module fails to compile or to run.
    pub fn new() -> mlua::Result<Self> {
        let lua = Lua::new();
        lua.sandbox(true)?;
        let standins: Table = lua
            .load(include_str!("../luau/roblox_standins.luau"))
            .set_name("roblox_standins")
            .eval()?;
        let g = lua.globals();
        g.set("Vector3", standins.get::<Table>("Vector3")?)?;
        g.set("CFrame", standins.get::<Table>("CFrame")?)?;
        let loaded = lua.create_table()?;
        // script.Parent: a folder whose children are named module scripts.
        let folder = lua.create_table()?;
        let folder_mt = lua.create_table()?;
        folder_mt.set(
            "__index",
            lua.create_function(|lua, (_, name): (Table, String)| {
                let child = lua.create_table()?;
                child.set("Name", name)?;
                Ok(child)
            })?,
        )?;
        folder.set_metatable(Some(folder_mt))?;
        let loaded_in_require = loaded.clone();
        let require = lua.create_function(move |_, m: Table| {
            let name: String = m.get("Name")?;
            match loaded_in_require.get::<Value>(name.as_str())? {
                Value::Nil => Err(mlua::Error::runtime(format!(
                    "module {name} is not loaded (load order: {LUAU_MODULES:?})"
                ))),
                v => Ok(v),
            }
        })?;
        // Also the global `require`: with safe environments (below) a module's imports,
        // `require` among them, are resolved once against the globals when it is loaded.
        lua.globals().set("require", require.clone())?;
        let host = Self {
            lua,
            loaded,
            folder,
            require,
        };
        for name in LUAU_MODULES {
            let path = luau_dir().join(format!("{name}.luau"));
            let src = std::fs::read_to_string(&path)
                .map_err(|e| mlua::Error::runtime(format!("{}: {e}", path.display())))?;
            host.load_module(name, &src)?;
        }
        Ok(host)
    }

    /// Runs `src` as the ModuleScript `name` (its `require(script.Parent.x)` finds every
    /// module loaded before it) and keeps its value for [`LuauHost::module`] and later
    /// modules. Used for the modules `statepack-codegen --target luau` generates. Errors: the
    /// module fails to compile or to run.
    pub fn load_module(&self, name: &str, src: &str) -> mlua::Result<Value> {
        let env = self.lua.create_table()?;
        let script = self.lua.create_table()?;
        script.set("Name", name)?;
        script.set("Parent", self.folder.clone())?;
        env.set("script", script)?;
        env.set("require", self.require.clone())?;
        let env_mt = self.lua.create_table()?;
        env_mt.set("__index", self.lua.globals())?;
        env.set_metatable(Some(env_mt))?;
        // As a Roblox script's environment (and the sandbox's own proxy of the globals):
        // imports such as `buffer.readu8` are resolved once and builtins take their fast
        // path. Without it every `buffer.*` call looks its name up through `__index`.
        env.set_safeenv(true);
        let module: Value = self
            .lua
            .load(src)
            .set_name(name)
            .set_environment(env)
            .eval()?;
        self.loaded.set(name, module.clone())?;
        Ok(module)
    }

    /// The module `name` (one of [`LUAU_MODULES`]).
    pub fn module(&self, name: &str) -> mlua::Result<Table> {
        self.loaded.get(name)
    }

    /// Function `func` of module `name`.
    pub fn func(&self, name: &str, func: &str) -> mlua::Result<Function> {
        self.module(name)?.get(func)
    }

    /// Compiles and runs `src` (a chunk of test glue) with the modules as the globals
    /// `Statepack`, `Snap` and `Xform`, and returns its value.
    pub fn eval<R: mlua::FromLuaMulti>(&self, name: &str, src: &str) -> mlua::Result<R> {
        let env = self.lua.create_table()?;
        env.set("Statepack", self.module("statepack")?)?;
        env.set("Snap", self.module("snap_cframe")?)?;
        env.set("Xform", self.module("rply_xform")?)?;
        let mt = self.lua.create_table()?;
        mt.set("__index", self.lua.globals())?;
        env.set_metatable(Some(mt))?;
        env.set_safeenv(true);
        self.lua
            .load(src)
            .set_name(name)
            .set_environment(env)
            .eval()
    }
}

/// Lua 5.1 as a child process.
pub mod lua51 {
    use std::path::PathBuf;
    use std::process::Command;

    /// The `lua5.1` interpreter on the PATH, or `None` after printing why the calling test
    /// skips. Panics (fails the test) when it is missing and `CI=true`: CI must run these
    /// tests (`.ci/run` installs Debian's `lua5.1`).
    pub fn interpreter(test: &str) -> Option<PathBuf> {
        let found = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("lua5.1"))
                .find(|p| p.is_file())
        });
        match found {
            Some(p) => Some(p),
            None if std::env::var("CI").as_deref() == Ok("true") => {
                panic!("{test}: lua5.1 is not installed; CI needs it (apt-get install lua5.1)")
            }
            None => {
                eprintln!("{test}: skipped: lua5.1 is not installed (apt-get install lua5.1)");
                None
            }
        }
    }

    /// Runs `script` (a Lua file) with `args` under `lua5.1`, with `package.path` set to the
    /// module folders (`lua/lua51/` and the host's `luahost/lua51/`). Returns stdout; errors
    /// carry stderr.
    pub fn run(lua: &PathBuf, script: &std::path::Path, args: &[&str]) -> Result<String, String> {
        let path = format!(
            "{}/?.lua;{}/lua51/?.lua",
            super::lua51_dir().display(),
            env!("CARGO_MANIFEST_DIR")
        );
        let out = Command::new(lua)
            .arg("-e")
            .arg(format!("package.path = [[{path}]]"))
            .arg(script)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", lua.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} {} failed ({}):\n{}",
                lua.display(),
                script.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        String::from_utf8(out.stdout).map_err(|e| e.to_string())
    }
}
