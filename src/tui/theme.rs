//! Every style of the TUI in one place. With `NO_COLOR` set the theme keeps modifiers
//! (bold, reversed, dim, underline) and drops every colour.

use crate::core::verdict::Decision;
use ratatui::style::{Color, Modifier, Style};

/// The styles of the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used (false when `NO_COLOR` is set and not empty).
    pub color: bool,
    /// The colours, overridable in the config file's `[theme]`.
    pub palette: Palette,
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            color: true,
            palette: Palette::default(),
        }
    }
}

/// The colours a config file can override (`[theme] ready = "green"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    /// `ready-for-commit`, passed stages, added diff lines.
    pub ready: Color,
    /// `retry`.
    pub retry: Color,
    /// `regenerate`.
    pub regenerate: Color,
    /// `recheck`.
    pub recheck: Color,
    /// `reject`.
    pub reject: Color,
    /// Failed stages, removed diff lines, errors.
    pub fail: Color,
    /// Focused borders, key labels, the gauge.
    pub accent: Color,
    /// Unfocused borders.
    pub border: Color,
    /// Warnings.
    pub warn: Color,
    /// Flip markers.
    pub flip: Color,
    /// The background of highlighted regions.
    pub highlight_bg: Color,
    /// The background of the current error.
    pub current_bg: Color,
    /// The background of the parse error mark.
    pub mark_bg: Color,
    /// The selected row's background; unset, the row is shown reversed.
    pub selection_bg: Option<Color>,
}

impl Default for Palette {
    fn default() -> Self {
        Palette {
            ready: Color::Green,
            retry: Color::Yellow,
            regenerate: Color::Red,
            recheck: Color::Magenta,
            reject: Color::Red,
            fail: Color::Red,
            accent: Color::Cyan,
            border: Color::DarkGray,
            warn: Color::Yellow,
            flip: Color::Magenta,
            highlight_bg: Color::Yellow,
            current_bg: Color::LightRed,
            mark_bg: Color::Red,
            selection_bg: None,
        }
    }
}

impl Palette {
    /// The names of the colours in the config file's `[theme]`.
    pub const NAMES: &[&str] = &[
        "ready",
        "retry",
        "regenerate",
        "recheck",
        "reject",
        "fail",
        "accent",
        "border",
        "warn",
        "flip",
        "highlight_bg",
        "current_bg",
        "mark_bg",
        "selection_bg",
    ];

    /// Sets the colour named `name` (one of [`Palette::NAMES`]); false for an unknown name.
    pub fn set(&mut self, name: &str, c: Color) -> bool {
        let slot = match name {
            "ready" => &mut self.ready,
            "retry" => &mut self.retry,
            "regenerate" => &mut self.regenerate,
            "recheck" => &mut self.recheck,
            "reject" => &mut self.reject,
            "fail" => &mut self.fail,
            "accent" => &mut self.accent,
            "border" => &mut self.border,
            "warn" => &mut self.warn,
            "flip" => &mut self.flip,
            "highlight_bg" => &mut self.highlight_bg,
            "current_bg" => &mut self.current_bg,
            "mark_bg" => &mut self.mark_bg,
            "selection_bg" => {
                self.selection_bg = Some(c);
                return true;
            }
            _ => return false,
        };
        *slot = c;
        true
    }
}

/// The colour names a config file may use (besides `#rrggbb`).
pub const COLOR_NAMES: &[(&str, Color)] = &[
    ("black", Color::Black),
    ("red", Color::Red),
    ("green", Color::Green),
    ("yellow", Color::Yellow),
    ("blue", Color::Blue),
    ("magenta", Color::Magenta),
    ("cyan", Color::Cyan),
    ("gray", Color::Gray),
    ("grey", Color::Gray),
    ("darkgray", Color::DarkGray),
    ("darkgrey", Color::DarkGray),
    ("lightred", Color::LightRed),
    ("lightgreen", Color::LightGreen),
    ("lightyellow", Color::LightYellow),
    ("lightblue", Color::LightBlue),
    ("lightmagenta", Color::LightMagenta),
    ("lightcyan", Color::LightCyan),
    ("white", Color::White),
];

/// Parses a colour: a name of [`COLOR_NAMES`] (case and `-`/`_` ignored) or `#rrggbb`.
///
/// # Errors
/// Neither; the message carries a "did you mean" hint when a name is close.
pub fn parse_color(s: &str) -> Result<Color, String> {
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() == 6
            && let Ok(n) = u32::from_str_radix(hex, 16)
        {
            return Ok(Color::Rgb((n >> 16) as u8, (n >> 8) as u8, n as u8));
        }
        return Err(format!("bad colour `{s}`: write hex colours as #rrggbb"));
    }
    let norm: String = s
        .chars()
        .filter(|c| *c != '-' && *c != '_' && *c != ' ')
        .collect::<String>()
        .to_ascii_lowercase();
    if let Some((_, c)) = COLOR_NAMES.iter().find(|(n, _)| *n == norm) {
        return Ok(*c);
    }
    let hint = crate::core::hint::hint_for(&norm, COLOR_NAMES.iter().map(|(n, _)| *n))
        .map(|h| format!(" ({h})"))
        .unwrap_or_default();
    Err(format!(
        "unknown colour `{s}`{hint}; use #rrggbb or one of: {}",
        COLOR_NAMES
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

impl Theme {
    /// The theme the environment asks for: no colour when `NO_COLOR` is set and not empty.
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            palette: Palette::default(),
        }
    }

    /// This theme with another palette.
    pub fn with_palette(self, palette: Palette) -> Theme {
        Theme { palette, ..self }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    /// The colour of a decision (the same as `check`'s human report).
    pub fn decision(&self, d: Decision) -> Style {
        match d {
            Decision::ReadyForCommit => self.fg(self.palette.ready),
            Decision::Retry => self.fg(self.palette.retry),
            Decision::Regenerate => self.fg(self.palette.regenerate),
            Decision::Recheck => self.fg(self.palette.recheck),
            Decision::Reject => self.fg(self.palette.reject).add_modifier(Modifier::BOLD),
        }
    }

    /// A passed stage.
    pub fn pass(&self) -> Style {
        self.fg(self.palette.ready)
    }

    /// A failed stage, a removed diff line, an error position.
    pub fn fail(&self) -> Style {
        self.fg(self.palette.fail).add_modifier(Modifier::BOLD)
    }

    /// Secondary text.
    pub fn dim(&self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    /// Titles and labels.
    pub fn bold(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// The selected row.
    pub fn selected(&self) -> Style {
        match self.palette.selection_bg {
            Some(bg) if self.color => Style::new().bg(bg).add_modifier(Modifier::BOLD),
            _ => Style::new().add_modifier(Modifier::REVERSED),
        }
    }

    /// A highlighted region (failing pointer, keyword, rule).
    pub fn highlight(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(self.palette.highlight_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        }
    }

    /// The current error among several highlighted ones.
    pub fn current(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(self.palette.current_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }

    /// The exact position of a parse error in the raw text.
    pub fn mark(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::White)
                .bg(self.palette.mark_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }

    /// A line only on the proposal side of the diff.
    pub fn removed(&self) -> Style {
        self.fg(self.palette.fail)
    }

    /// A line only on the intent side of the diff.
    pub fn added(&self) -> Style {
        self.fg(self.palette.ready)
    }

    /// The focused pane's border.
    pub fn focus_border(&self) -> Style {
        self.fg(self.palette.accent).add_modifier(Modifier::BOLD)
    }

    /// An unfocused pane's border.
    pub fn border(&self) -> Style {
        self.fg(self.palette.border)
    }

    /// Key labels in hints and help.
    pub fn key(&self) -> Style {
        self.fg(self.palette.accent).add_modifier(Modifier::BOLD)
    }

    /// The progress gauge.
    pub fn gauge(&self) -> Style {
        self.fg(self.palette.accent)
    }

    /// Warning counts and messages.
    pub fn warn(&self) -> Style {
        self.fg(self.palette.warn)
    }

    /// The flip marker and flip notes.
    pub fn flip(&self) -> Style {
        self.fg(self.palette.flip).add_modifier(Modifier::BOLD)
    }
}
