//! Every style of the TUI in one place. With `NO_COLOR` set the theme keeps modifiers
//! (bold, reversed, dim, underline) and drops every colour.

use crate::core::verdict::Decision;
use ratatui::style::{Color, Modifier, Style};

/// The styles of the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used (false when `NO_COLOR` is set and not empty).
    pub color: bool,
}

impl Default for Theme {
    fn default() -> Self {
        Theme { color: true }
    }
}

impl Theme {
    /// The theme the environment asks for: no colour when `NO_COLOR` is set and not empty.
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
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
            Decision::ReadyForCommit => self.fg(Color::Green),
            Decision::Retry => self.fg(Color::Yellow),
            Decision::Regenerate => self.fg(Color::Red),
            Decision::Recheck => self.fg(Color::Magenta),
            Decision::Reject => self.fg(Color::Red).add_modifier(Modifier::BOLD),
        }
    }

    /// A passed stage.
    pub fn pass(&self) -> Style {
        self.fg(Color::Green)
    }

    /// A failed stage, a removed diff line, an error position.
    pub fn fail(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
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
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// A highlighted region (failing pointer, keyword, rule).
    pub fn highlight(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
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
                .bg(Color::LightRed)
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
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }

    /// A line only on the proposal side of the diff.
    pub fn removed(&self) -> Style {
        self.fg(Color::Red)
    }

    /// A line only on the intent side of the diff.
    pub fn added(&self) -> Style {
        self.fg(Color::Green)
    }

    /// The focused pane's border.
    pub fn focus_border(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// An unfocused pane's border.
    pub fn border(&self) -> Style {
        self.fg(Color::DarkGray)
    }

    /// Key labels in hints and help.
    pub fn key(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// The progress gauge.
    pub fn gauge(&self) -> Style {
        self.fg(Color::Cyan)
    }

    /// Warning counts and messages.
    pub fn warn(&self) -> Style {
        self.fg(Color::Yellow)
    }

    /// The flip marker and flip notes.
    pub fn flip(&self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }
}
