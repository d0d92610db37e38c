//! The keymap: one table of bindings. Key dispatch, the footer hints and the `?` help
//! overlay are all generated from it, so they cannot drift apart (yazi, television).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The detail tabs, in key order (`1`..`9`, then `0`). A new tab is a variant here, in [`Tab::ALL`]
/// and the tables below, a binding in [`KEYMAP`], and its draw function in `ui::tabs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tab {
    /// Proposal vs confirmed intent, side by side.
    Diff,
    /// The proposal as pretty JSON, failing pointers highlighted.
    Proposal,
    /// The output text exactly as captured, control characters escaped.
    Raw,
    /// Provider, stop reason, usage, meta.
    Response,
    /// The schema and the rules, failing parts highlighted.
    Contract,
    /// The trusted context and the confirmed intent.
    Context,
    /// The self-correction message (`verdict feedback`).
    Feedback,
    /// Verdict flips of this session.
    History,
    /// The self-correction chain the capture is an attempt of: its attempts, the feedback's
    /// effects, the diffs between consecutive proposals (`docs/chains.md`).
    Chain,
    /// The verdict's repair: the original beside the repaired copy, the changed pointers
    /// marked (`docs/repairs.md#the-repair-tab`).
    Repair,
}

impl Tab {
    /// Every tab in order.
    pub const ALL: [Tab; 10] = [
        Tab::Diff,
        Tab::Proposal,
        Tab::Raw,
        Tab::Response,
        Tab::Contract,
        Tab::Context,
        Tab::Feedback,
        Tab::History,
        Tab::Chain,
        Tab::Repair,
    ];

    /// The tab's title.
    pub fn title(self) -> &'static str {
        match self {
            Tab::Diff => "Diff",
            Tab::Proposal => "Proposal",
            Tab::Raw => "Raw",
            Tab::Response => "Response",
            Tab::Contract => "Contract",
            Tab::Context => "Context",
            Tab::Feedback => "Feedback",
            Tab::History => "History",
            Tab::Chain => "Chain",
            Tab::Repair => "Repair",
        }
    }

    /// A short title for narrow terminals (at 80 columns every tab keeps its short title:
    /// ` Diff Prop Raw Rsp Ctr Ctx Fbk Hist Chn Rep`, 43 columns of the detail pane's 44).
    pub fn short_title(self) -> &'static str {
        match self {
            Tab::Diff => "Diff",
            Tab::Proposal => "Prop",
            Tab::Raw => "Raw",
            Tab::Response => "Rsp",
            Tab::Contract => "Ctr",
            Tab::Context => "Ctx",
            Tab::Feedback => "Fbk",
            Tab::History => "Hist",
            Tab::Chain => "Chn",
            Tab::Repair => "Rep",
        }
    }

    /// 0-based position.
    pub fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    /// The digit of its default key, as the tab bar shows it (`1`..`9`, `0` for the tenth).
    pub fn digit(self) -> char {
        char::from_digit(((self.index() + 1) % 10) as u32, 10).unwrap_or('0')
    }
}

/// Everything a key can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Move down one row (or scroll the detail).
    Down,
    /// Move up one row.
    Up,
    /// Move down one page.
    PageDown,
    /// Move up one page.
    PageUp,
    /// Jump to the first row.
    First,
    /// Jump to the last row.
    Last,
    /// Focus the next pane.
    NextPane,
    /// Focus the previous pane.
    PrevPane,
    /// Show a detail tab.
    ShowTab(Tab),
    /// Start typing a filter.
    Filter,
    /// Clear the filter, close triage or help.
    Clear,
    /// Toggle the triage tree.
    Triage,
    /// Show the triage tree grouped by repair (repair > would-be outcome), or back by stage.
    TriageByRepair,
    /// Toggle the chain tree: the list grouped by self-correction chain.
    Chains,
    /// Open the selected triage group (or focus the detail).
    Open,
    /// Step to the next error of the selected capture.
    NextError,
    /// Step to the previous error.
    PrevError,
    /// Re-validate every capture (contracts re-read).
    Revalidate,
    /// Pause or resume watching (changes made while paused are applied on resume).
    Pause,
    /// Copy the current error's pointer (on the Feedback tab: the feedback), via OSC 52.
    Copy,
    /// Open the capture in `$VISUAL`, else `$EDITOR`, else `vi`, at its line.
    Edit,
    /// Show the flips of the last schema or rules change.
    Review,
    /// Show or hide the help overlay.
    Help,
    /// Quit.
    Quit,
}

impl Action {
    /// What the action does, for the help overlay.
    pub fn description(self) -> &'static str {
        match self {
            Action::Down => "move down (scroll in the detail pane)",
            Action::Up => "move up (scroll in the detail pane)",
            Action::PageDown => "page down",
            Action::PageUp => "page up",
            Action::First => "first row",
            Action::Last => "last row",
            Action::NextPane => "focus the next pane",
            Action::PrevPane => "focus the previous pane",
            Action::ShowTab(Tab::Diff) => "tab: proposal vs confirmed intent",
            Action::ShowTab(Tab::Proposal) => "tab: proposal, failing pointers highlighted",
            Action::ShowTab(Tab::Raw) => "tab: raw output, parse error marked",
            Action::ShowTab(Tab::Response) => "tab: provider response and meta",
            Action::ShowTab(Tab::Contract) => "tab: schema and rules, failures highlighted",
            Action::ShowTab(Tab::Context) => "tab: trusted context and intent",
            Action::ShowTab(Tab::Feedback) => "tab: self-correction feedback",
            Action::ShowTab(Tab::History) => "tab: verdict flips this session",
            Action::ShowTab(Tab::Chain) => {
                "tab: the capture's chain: attempts, feedback effects, proposal diffs"
            }
            Action::ShowTab(Tab::Repair) => {
                "tab: the repair's copy beside the original, changed pointers marked"
            }
            Action::Filter => {
                "filter: fuzzy text, stage: reason: decision: contract: pointer: repair: would: flipped unmet (! negates)"
            }
            Action::Clear => "clear the filter / close triage, the chain tree or help",
            Action::Triage => "triage tree: stage > reason > pointer",
            Action::TriageByRepair => {
                "triage tree by repair: repair > would-be outcome (again: by stage)"
            }
            Action::Chains => "chain tree: the list grouped by chain (Enter expands a chain)",
            Action::Open => {
                "open the triage group as a filtered list (in the list: focus the detail)"
            }
            Action::NextError => "next error of the capture",
            Action::PrevError => "previous error of the capture",
            Action::Revalidate => "re-validate every capture",
            Action::Pause => "pause / resume watching (changes while paused apply on resume)",
            Action::Copy => "copy the error's pointer (Feedback tab: the feedback) via OSC 52",
            Action::Edit => "open the capture in $VISUAL / $EDITOR (else vi) at its line",
            Action::Review => "review: the flips of the last schema or rules change",
            Action::Help => "this help",
            Action::Quit => "quit",
        }
    }
}

/// A key as the keymap names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character, any modifier but Ctrl/Alt.
    Char(char),
    /// Ctrl + a character.
    Ctrl(char),
    /// A non-character key.
    Code(KeyCode),
}

impl Key {
    /// Whether a crossterm key event is this key.
    pub fn matches(self, ev: &KeyEvent) -> bool {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        let alt = ev.modifiers.contains(KeyModifiers::ALT);
        match self {
            Key::Char(c) => ev.code == KeyCode::Char(c) && !ctrl && !alt,
            Key::Ctrl(c) => ctrl && ev.code == KeyCode::Char(c),
            Key::Code(code) => ev.code == code && !ctrl && !alt,
        }
    }
}

/// One binding: keys, the label shown for them, the action, and an optional footer hint.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// The keys that trigger the action.
    pub keys: &'static [Key],
    /// How the keys are written in help and hints (`j/↓`).
    pub label: &'static str,
    /// What they do.
    pub action: Action,
    /// The short footer hint (`move`), when the binding is shown in the footer.
    pub hint: Option<&'static str>,
}

const fn b(
    keys: &'static [Key],
    label: &'static str,
    action: Action,
    hint: Option<&'static str>,
) -> Binding {
    Binding {
        keys,
        label,
        action,
        hint,
    }
}

/// The default keymap.
pub const KEYMAP: &[Binding] = &[
    b(
        &[Key::Char('j'), Key::Code(KeyCode::Down)],
        "j/↓",
        Action::Down,
        Some("move"),
    ),
    b(
        &[Key::Char('k'), Key::Code(KeyCode::Up)],
        "k/↑",
        Action::Up,
        None,
    ),
    b(
        &[Key::Code(KeyCode::PageDown), Key::Ctrl('d')],
        "PgDn",
        Action::PageDown,
        None,
    ),
    b(
        &[Key::Code(KeyCode::PageUp), Key::Ctrl('u')],
        "PgUp",
        Action::PageUp,
        None,
    ),
    b(
        &[Key::Char('g'), Key::Code(KeyCode::Home)],
        "g",
        Action::First,
        None,
    ),
    b(
        &[Key::Char('G'), Key::Code(KeyCode::End)],
        "G",
        Action::Last,
        None,
    ),
    b(
        &[Key::Code(KeyCode::Tab)],
        "Tab",
        Action::NextPane,
        Some("pane"),
    ),
    b(
        &[Key::Code(KeyCode::BackTab)],
        "S-Tab",
        Action::PrevPane,
        None,
    ),
    b(
        &[Key::Char('1')],
        "1",
        Action::ShowTab(Tab::Diff),
        Some("0-9 tabs"),
    ),
    b(&[Key::Char('2')], "2", Action::ShowTab(Tab::Proposal), None),
    b(&[Key::Char('3')], "3", Action::ShowTab(Tab::Raw), None),
    b(&[Key::Char('4')], "4", Action::ShowTab(Tab::Response), None),
    b(&[Key::Char('5')], "5", Action::ShowTab(Tab::Contract), None),
    b(&[Key::Char('6')], "6", Action::ShowTab(Tab::Context), None),
    b(&[Key::Char('7')], "7", Action::ShowTab(Tab::Feedback), None),
    b(&[Key::Char('8')], "8", Action::ShowTab(Tab::History), None),
    b(&[Key::Char('9')], "9", Action::ShowTab(Tab::Chain), None),
    b(&[Key::Char('0')], "0", Action::ShowTab(Tab::Repair), None),
    b(&[Key::Char('/')], "/", Action::Filter, Some("filter")),
    b(&[Key::Code(KeyCode::Esc)], "Esc", Action::Clear, None),
    b(&[Key::Char('t')], "t", Action::Triage, Some("triage")),
    b(&[Key::Char('b')], "b", Action::TriageByRepair, None),
    b(&[Key::Char('c')], "c", Action::Chains, None),
    b(&[Key::Code(KeyCode::Enter)], "Enter", Action::Open, None),
    b(
        &[Key::Char('n')],
        "n",
        Action::NextError,
        Some("next error"),
    ),
    b(&[Key::Char('N')], "N", Action::PrevError, None),
    b(
        &[Key::Char('r')],
        "r",
        Action::Revalidate,
        Some("re-validate"),
    ),
    b(&[Key::Char('y')], "y", Action::Copy, Some("copy")),
    b(&[Key::Char('e')], "e", Action::Edit, Some("edit")),
    b(&[Key::Char('p')], "p", Action::Pause, Some("pause")),
    b(&[Key::Char('v')], "v", Action::Review, Some("review")),
    b(&[Key::Char('?')], "?", Action::Help, Some("help")),
    b(
        &[Key::Char('q'), Key::Ctrl('c')],
        "q",
        Action::Quit,
        Some("quit"),
    ),
];

/// The action bound to a key event in the default keymap, if any.
pub fn lookup(ev: &KeyEvent) -> Option<Action> {
    KEYMAP
        .iter()
        .find(|b| b.keys.iter().any(|k| k.matches(ev)))
        .map(|b| b.action)
}

impl Action {
    /// Every action, in keymap order.
    pub fn all() -> impl Iterator<Item = Action> {
        KEYMAP.iter().map(|b| b.action)
    }

    /// The action's name in the config file: the snake_case variant name
    /// (`page_down`, `show_tab_diff`).
    pub fn name(self) -> &'static str {
        match self {
            Action::Down => "down",
            Action::Up => "up",
            Action::PageDown => "page_down",
            Action::PageUp => "page_up",
            Action::First => "first",
            Action::Last => "last",
            Action::NextPane => "next_pane",
            Action::PrevPane => "prev_pane",
            Action::ShowTab(Tab::Diff) => "show_tab_diff",
            Action::ShowTab(Tab::Proposal) => "show_tab_proposal",
            Action::ShowTab(Tab::Raw) => "show_tab_raw",
            Action::ShowTab(Tab::Response) => "show_tab_response",
            Action::ShowTab(Tab::Contract) => "show_tab_contract",
            Action::ShowTab(Tab::Context) => "show_tab_context",
            Action::ShowTab(Tab::Feedback) => "show_tab_feedback",
            Action::ShowTab(Tab::History) => "show_tab_history",
            Action::ShowTab(Tab::Chain) => "show_tab_chain",
            Action::ShowTab(Tab::Repair) => "show_tab_repair",
            Action::Filter => "filter",
            Action::Clear => "clear",
            Action::Triage => "triage",
            Action::TriageByRepair => "triage_by_repair",
            Action::Chains => "chains",
            Action::Open => "open",
            Action::NextError => "next_error",
            Action::PrevError => "prev_error",
            Action::Revalidate => "revalidate",
            Action::Pause => "pause",
            Action::Copy => "copy",
            Action::Edit => "edit",
            Action::Review => "review",
            Action::Help => "help",
            Action::Quit => "quit",
        }
    }

    /// The action named `name` in the config file.
    pub fn from_name(name: &str) -> Option<Action> {
        Action::all().find(|a| a.name() == name)
    }
}

/// The non-character keys by their config-file names (lower case) and display labels.
const NAMED_KEYS: &[(&str, KeyCode, &str)] = &[
    ("down", KeyCode::Down, "↓"),
    ("up", KeyCode::Up, "↑"),
    ("left", KeyCode::Left, "←"),
    ("right", KeyCode::Right, "→"),
    ("pagedown", KeyCode::PageDown, "PgDn"),
    ("pgdn", KeyCode::PageDown, "PgDn"),
    ("pageup", KeyCode::PageUp, "PgUp"),
    ("pgup", KeyCode::PageUp, "PgUp"),
    ("home", KeyCode::Home, "Home"),
    ("end", KeyCode::End, "End"),
    ("tab", KeyCode::Tab, "Tab"),
    ("backtab", KeyCode::BackTab, "S-Tab"),
    ("shift-tab", KeyCode::BackTab, "S-Tab"),
    ("enter", KeyCode::Enter, "Enter"),
    ("esc", KeyCode::Esc, "Esc"),
    ("backspace", KeyCode::Backspace, "BS"),
    ("delete", KeyCode::Delete, "Del"),
    ("insert", KeyCode::Insert, "Ins"),
    ("space", KeyCode::Char(' '), "Space"),
];

impl Key {
    /// Parses a config-file key name: one character (`q`, `G`, `?`), `ctrl-x`, a named key
    /// (`down`, `pgdn`, `enter`, `esc`, `space`, ...) or `f1`..`f12`.
    ///
    /// # Errors
    /// The name is none of these; the message carries a "did you mean" hint when one is close.
    pub fn parse(s: &str) -> Result<Key, String> {
        let mut chars = s.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if c.is_control() {
                return Err(format!("unknown key {s:?}"));
            }
            return Ok(Key::Char(c));
        }
        let lower = s.to_ascii_lowercase();
        for prefix in ["ctrl-", "ctrl+", "c-"] {
            if let Some(rest) = lower.strip_prefix(prefix) {
                let mut cs = rest.chars();
                if let (Some(c), None) = (cs.next(), cs.next())
                    && !c.is_control()
                {
                    return Ok(Key::Ctrl(c));
                }
            }
        }
        if let Some((_, code, _)) = NAMED_KEYS.iter().find(|(n, _, _)| *n == lower) {
            return Ok(match code {
                KeyCode::Char(c) => Key::Char(*c),
                c => Key::Code(*c),
            });
        }
        if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok())
            && (1..=12).contains(&n)
        {
            return Ok(Key::Code(KeyCode::F(n)));
        }
        let names = NAMED_KEYS.iter().map(|(n, _, _)| *n).chain(["ctrl-c"]);
        let hint = crate::core::hint::hint_for(&lower, names)
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        Err(format!(
            "unknown key `{s}`{hint}; keys are one character, ctrl-x, f1-f12 or one of: {}",
            NAMED_KEYS
                .iter()
                .map(|(n, _, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// How the key is written in help and hints (`j`, `↓`, `C-c`, `PgDn`).
    pub fn label(self) -> String {
        match self {
            Key::Char(' ') => "Space".into(),
            Key::Char(c) => c.to_string(),
            Key::Ctrl(c) => format!("C-{c}"),
            Key::Code(KeyCode::F(n)) => format!("F{n}"),
            Key::Code(code) => NAMED_KEYS
                .iter()
                .find(|(_, c, _)| *c == code)
                .map(|(_, _, l)| (*l).to_string())
                .unwrap_or_else(|| format!("{code:?}")),
        }
    }
}

/// One binding of a [`Keymap`]: the default table's, or the user's for a rebound action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// The keys that trigger the action.
    pub keys: Vec<Key>,
    /// How the keys are written in help and hints.
    pub label: String,
    /// What they do.
    pub action: Action,
    /// The footer hint, if any.
    pub hint: Option<&'static str>,
    /// Whether the user rebound this action.
    pub custom: bool,
}

/// The keymap in use: [`KEYMAP`] with the user's bindings merged over it. Key dispatch,
/// footer hints and the help overlay all read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    /// The bindings, in the default table's order.
    pub bindings: Vec<Bound>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap {
            bindings: KEYMAP
                .iter()
                .map(|b| Bound {
                    keys: b.keys.to_vec(),
                    label: b.label.to_string(),
                    action: b.action,
                    hint: b.hint,
                    custom: false,
                })
                .collect(),
        }
    }
}

impl Keymap {
    /// The defaults with `overrides` merged over them: a rebound action loses its default
    /// keys, the others keep theirs.
    ///
    /// # Errors
    /// A key ends up bound to two actions (the message names both), or an action gets no key.
    pub fn with_overrides(overrides: &[(Action, Vec<Key>)]) -> Result<Keymap, String> {
        let mut map = Keymap::default();
        for (action, keys) in overrides {
            if keys.is_empty() {
                return Err(format!("[keys] {}: give at least one key", action.name()));
            }
            if let Some(b) = map.bindings.iter_mut().find(|b| b.action == *action) {
                b.keys = keys.clone();
                b.label = keys.iter().map(|k| k.label()).collect::<Vec<_>>().join("/");
                b.custom = true;
            }
        }
        let mut seen: Vec<(Key, Action)> = Vec::new();
        for b in &map.bindings {
            for k in &b.keys {
                if let Some((_, other)) = seen.iter().find(|(s, _)| s == k) {
                    if *other == b.action {
                        continue;
                    }
                    return Err(format!(
                        "[keys] key `{}` is bound to both `{}` and `{}`",
                        k.label(),
                        other.name(),
                        b.action.name()
                    ));
                }
                seen.push((*k, b.action));
            }
        }
        Ok(map)
    }

    /// The action bound to a key event, if any.
    pub fn lookup(&self, ev: &KeyEvent) -> Option<Action> {
        self.bindings
            .iter()
            .find(|b| b.keys.iter().any(|k| k.matches(ev)))
            .map(|b| b.action)
    }

    /// The binding of an action.
    pub fn binding(&self, a: Action) -> Option<&Bound> {
        self.bindings.iter().find(|b| b.action == a)
    }

    /// The footer hints: `(keys, hint)` for every binding that has one. A hint that names
    /// its own keys (`1-8 tabs`) keeps them only while no tab key is rebound.
    pub fn hints(&self) -> Vec<(String, &'static str)> {
        let tabs_custom = self
            .bindings
            .iter()
            .any(|b| b.custom && matches!(b.action, Action::ShowTab(_)));
        self.bindings
            .iter()
            .filter_map(|b| {
                b.hint.map(|h| match h.split_once(' ') {
                    Some((keys, rest)) if keys.contains('-') && keys.len() <= 4 => {
                        if tabs_custom {
                            (b.label.clone(), rest)
                        } else {
                            (keys.to_string(), rest)
                        }
                    }
                    _ => (b.label.clone(), h),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_key_is_bound_twice() {
        let mut seen: Vec<Key> = Vec::new();
        for b in KEYMAP {
            for k in b.keys {
                assert!(!seen.contains(k), "{k:?} bound twice");
                seen.push(*k);
            }
        }
    }

    #[test]
    fn docs_config_lists_every_action_and_no_other() {
        // the action table of docs/config.md#keys: `| `name` | keys | does |` rows
        let doc = include_str!("../../docs/config.md");
        let listed: Vec<&str> = doc
            .lines()
            .filter_map(|l| l.strip_prefix("| `")?.split_once("` |").map(|(n, _)| n))
            .filter(|n| !n.contains('.') && n.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .filter(|n| Action::from_name(n).is_some() || n.starts_with("show_tab_"))
            .collect();
        let names: Vec<&str> = Action::all().map(Action::name).collect();
        assert_eq!(
            listed, names,
            "docs/config.md's action table, in keymap order"
        );
    }

    #[test]
    fn every_tab_has_a_key() {
        for t in Tab::ALL {
            assert!(KEYMAP.iter().any(|b| b.action == Action::ShowTab(t)));
        }
    }

    #[test]
    fn ctrl_c_quits_and_plain_c_groups_by_chain() {
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(lookup(&ctrl_c), Some(Action::Quit));
        let c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::NONE);
        assert_eq!(lookup(&c), Some(Action::Chains));
    }
}
