//! What both generators write a program with: a deterministic random
//! source, fresh names and indented lines.

use ad::check::Rng;

pub struct Source {
    pub rng: Rng,
    pub lines: Vec<String>,
    /// The indentation of the next line, in blocks inside the function.
    pub depth: usize,
    fresh: usize,
}

impl Source {
    pub fn new(seed: u64) -> Self {
        Source {
            rng: Rng::new(seed),
            lines: Vec::new(),
            depth: 1,
            fresh: 0,
        }
    }

    pub fn pick(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    pub fn chance(&mut self, p: f64) -> bool {
        (self.rng.uniform() + 1.0) / 2.0 < p
    }

    pub fn name(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    pub fn line(&mut self, text: impl AsRef<str>) {
        let pad = "    ".repeat(self.depth + 1);
        self.lines.push(format!("{pad}{}", text.as_ref()));
    }

    /// A literal in `[0.2, 1.4)`, two decimals.
    pub fn literal(&mut self) -> String {
        format!("{:.2}", 0.2 + (self.rng.uniform() + 1.0) * 0.6)
    }
}

/// A program (with a field `source` and [`Source`] in scope) reads its
/// source's methods and fields as its own.
macro_rules! reads_source {
    ($program:ty) => {
        impl std::ops::Deref for $program {
            type Target = Source;
            fn deref(&self) -> &Self::Target {
                &self.source
            }
        }
        impl std::ops::DerefMut for $program {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.source
            }
        }
    };
}
pub(crate) use reads_source;
