//! The user's TUI config file: key bindings and colours.
//!
//! ```toml
//! [keys]
//! quit = ["q", "ctrl-c"]
//! down = ["j", "down"]
//!
//! [theme]
//! ready = "green"
//! selection_bg = "#303030"
//! ```
//!
//! Found at `--config FILE`, else `$XDG_CONFIG_HOME/verdict/config.toml`, else
//! `~/.config/verdict/config.toml`; a missing file means the defaults. User bindings are
//! merged over the defaults (a rebound action loses its default keys). Every unknown name
//! is an error with a "did you mean" hint, reported before the terminal is taken over.

use crate::core::hint::hint_for;
use crate::tui::keymap::{Action, Key, Keymap};
use crate::tui::theme::{Palette, parse_color};
use std::path::{Path, PathBuf};

/// The parsed config: the keymap and the palette to use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// The keymap, the user's bindings merged over the defaults.
    pub keymap: Keymap,
    /// The colours.
    pub palette: Palette,
}

impl Config {
    /// Parses a config file's text.
    ///
    /// # Errors
    /// Invalid TOML, an unknown section, action, key or colour (with a hint), a value of the
    /// wrong type, or a key bound to two actions.
    pub fn from_toml(text: &str) -> Result<Config, String> {
        let table: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut overrides: Vec<(Action, Vec<Key>)> = Vec::new();
        let mut palette = Palette::default();
        for (section, value) in &table {
            match section.as_str() {
                "keys" => {
                    let keys = value
                        .as_table()
                        .ok_or("[keys] must be a table: [keys] quit = [\"q\"]")?;
                    for (name, v) in keys {
                        let action = Action::from_name(name).ok_or_else(|| {
                            unknown(
                                "[keys] unknown action",
                                name,
                                Action::all().map(Action::name),
                            )
                        })?;
                        let list: Vec<&toml::Value> = match v {
                            toml::Value::Array(a) => a.iter().collect(),
                            other => vec![other],
                        };
                        let mut ks = Vec::new();
                        for k in list {
                            let s = k.as_str().ok_or_else(|| {
                                format!("[keys] {name}: keys are strings, e.g. [\"j\", \"down\"]")
                            })?;
                            let key = Key::parse(s).map_err(|e| format!("[keys] {name}: {e}"))?;
                            if !ks.contains(&key) {
                                ks.push(key);
                            }
                        }
                        overrides.push((action, ks));
                    }
                }
                "theme" => {
                    let colors = value
                        .as_table()
                        .ok_or("[theme] must be a table: [theme] ready = \"green\"")?;
                    for (name, v) in colors {
                        let s = v.as_str().ok_or_else(|| {
                            format!(
                                "[theme] {name}: colours are strings, e.g. \"green\" or \"#303030\""
                            )
                        })?;
                        let c = parse_color(s).map_err(|e| format!("[theme] {name}: {e}"))?;
                        if !palette.set(name, c) {
                            return Err(unknown(
                                "[theme] unknown colour slot",
                                name,
                                Palette::NAMES.iter().copied(),
                            ));
                        }
                    }
                }
                // `foo = 1` at the top is a key outside any section, not a section
                other if !value.is_table() => {
                    return Err(format!(
                        "`{other} = ...` is outside any section: the config holds only [keys] and [theme] tables (e.g. [keys] quit = [\"q\"])"
                    ));
                }
                other => {
                    return Err(unknown(
                        "unknown section",
                        &format!("[{other}]"),
                        ["[keys]", "[theme]"],
                    ));
                }
            }
        }
        Ok(Config {
            keymap: Keymap::with_overrides(&overrides)?,
            palette,
        })
    }

    /// Where the config file is: `explicit`, else `$XDG_CONFIG_HOME/verdict/config.toml`,
    /// else `$HOME/.config/verdict/config.toml`.
    pub fn path(explicit: Option<&Path>) -> Option<PathBuf> {
        if let Some(p) = explicit {
            return Some(p.to_path_buf());
        }
        let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if let Some(x) = nonempty("XDG_CONFIG_HOME") {
            return Some(PathBuf::from(x).join("verdict").join("config.toml"));
        }
        nonempty("HOME").map(|h| {
            PathBuf::from(h)
                .join(".config")
                .join("verdict")
                .join("config.toml")
        })
    }

    /// Loads the config: from `explicit` (which must exist), else from the default place
    /// (a missing file there means the defaults).
    ///
    /// # Errors
    /// The file cannot be read or is invalid; the message names the file.
    pub fn load(explicit: Option<&Path>) -> anyhow::Result<Config> {
        let Some(path) = Config::path(explicit) else {
            return Ok(Config::default());
        };
        let text = match crate::core::bounded::read_to_string(&path) {
            Ok(t) => t,
            Err(crate::core::bounded::ReadError::NotFound) if explicit.is_none() => {
                return Ok(Config::default());
            }
            Err(e) => anyhow::bail!(
                "cannot read the config {}: {e}",
                crate::core::escape::path(&path)
            ),
        };
        Config::from_toml(&text)
            .map_err(|e| anyhow::anyhow!("config {}: {e}", crate::core::escape::path(&path)))
    }
}

fn unknown<'a>(what: &str, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    match hint_for(name, candidates.iter().copied()) {
        Some(h) => format!("{what} `{name}`: {h}"),
        None => format!("{what} `{name}`; known: {}", candidates.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keymap::KEYMAP;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use ratatui::style::Color;

    fn ev(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn empty_config_is_the_defaults() {
        assert_eq!(Config::from_toml("").unwrap(), Config::default());
        assert_eq!(Keymap::default().bindings.len(), KEYMAP.len());
    }

    #[test]
    fn defaults_round_trip_through_the_file_format() {
        // writing every default binding out by name and reading it back changes nothing
        let mut text = String::from("[keys]\n");
        for b in KEYMAP {
            let keys: Vec<String> = b
                .keys
                .iter()
                .map(|k| match k {
                    Key::Char(c) => format!("{c:?}"),
                    Key::Ctrl(c) => format!("\"ctrl-{c}\""),
                    Key::Code(KeyCode::BackTab) => "\"backtab\"".into(),
                    Key::Code(code) => format!("{:?}", format!("{code:?}").to_lowercase()),
                })
                .collect();
            text.push_str(&format!("{} = [{}]\n", b.action.name(), keys.join(", ")));
        }
        let c = Config::from_toml(&text).unwrap();
        for (got, want) in c.keymap.bindings.iter().zip(KEYMAP) {
            assert_eq!(got.action, want.action);
            assert_eq!(got.keys, want.keys, "{}", want.action.name());
        }
        for a in Action::all() {
            assert_eq!(Action::from_name(a.name()), Some(a));
        }
    }

    #[test]
    fn user_bindings_merge_over_the_defaults() {
        let c = Config::from_toml("[keys]\ndown = [\"s\", \"down\"]\nquit = \"x\"\n").unwrap();
        let m = &c.keymap;
        assert_eq!(m.lookup(&ev('s')), Some(Action::Down));
        assert_eq!(
            m.lookup(&ev('j')),
            None,
            "a rebound action loses its default keys"
        );
        assert_eq!(m.lookup(&ev('x')), Some(Action::Quit));
        assert_eq!(m.lookup(&ev('q')), None);
        assert_eq!(m.lookup(&ev('k')), Some(Action::Up), "others keep theirs");
        assert_eq!(m.binding(Action::Down).unwrap().label, "s/↓");
        let hints = m.hints();
        assert!(hints.contains(&("x".to_string(), "quit")));
        assert!(hints.contains(&("s/↓".to_string(), "move")));
    }

    #[test]
    fn a_key_bound_twice_names_both_actions() {
        let e = Config::from_toml("[keys]\ntriage = \"q\"\n").unwrap_err();
        assert!(
            e.contains("`q`") && e.contains("triage") && e.contains("quit"),
            "{e}"
        );
        let e = Config::from_toml("[keys]\ntriage = \"z\"\nedit = \"z\"\n").unwrap_err();
        assert!(e.contains("triage") && e.contains("edit"), "{e}");
        // swapping two actions' keys is fine
        let c = Config::from_toml("[keys]\nfirst = \"G\"\nlast = \"g\"\n").unwrap();
        assert_eq!(c.keymap.lookup(&ev('G')), Some(Action::First));
    }

    #[test]
    fn unknown_names_are_errors_with_hints() {
        let e = Config::from_toml("[keyz]\nquit = \"q\"\n").unwrap_err();
        assert!(e.contains("did you mean `[keys]`"), "{e}");
        let e = Config::from_toml("[keys]\nqiut = \"q\"\n").unwrap_err();
        assert!(e.contains("did you mean `quit`"), "{e}");
        let e = Config::from_toml("[keys]\ndown = \"dwon\"\n").unwrap_err();
        assert!(e.contains("did you mean `down`"), "{e}");
        let e = Config::from_toml("[theme]\nready = \"gren\"\n").unwrap_err();
        assert!(e.contains("did you mean `green`"), "{e}");
        let e = Config::from_toml("[theme]\nredy = \"green\"\n").unwrap_err();
        assert!(e.contains("did you mean `ready`"), "{e}");
        let e = Config::from_toml("[theme]\nready = \"#30303\"\n").unwrap_err();
        assert!(e.contains("#rrggbb"), "{e}");
        assert!(Config::from_toml("[keys\n").is_err());
        // a top-level key is not a section
        let e = Config::from_toml("foo = 1\n").unwrap_err();
        assert_eq!(
            e,
            "`foo = ...` is outside any section: the config holds only [keys] and [theme] tables (e.g. [keys] quit = [\"q\"])"
        );
    }

    #[test]
    fn colours_by_name_and_hex() {
        let c = Config::from_toml(
            "[theme]\nready = \"light-green\"\nreject = \"Red\"\nselection_bg = \"#303030\"\n",
        )
        .unwrap();
        assert_eq!(c.palette.ready, Color::LightGreen);
        assert_eq!(c.palette.reject, Color::Red);
        assert_eq!(c.palette.selection_bg, Some(Color::Rgb(0x30, 0x30, 0x30)));
    }

    #[test]
    fn a_missing_default_file_is_the_defaults_but_a_missing_explicit_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.toml");
        assert!(Config::load(Some(&missing)).is_err());
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "[keys]\nqiut = \"q\"\n").unwrap();
        let e = format!("{:#}", Config::load(Some(&bad)).unwrap_err());
        assert!(
            e.contains("bad.toml") && e.contains("did you mean `quit`"),
            "{e}"
        );
    }
}
