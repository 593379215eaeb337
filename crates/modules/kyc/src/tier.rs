//! Travel Rule tiers and the level → tier mapping.

use crate::{Level, Params};

/// A Travel Rule tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// Cannot originate a stablecoin transfer.
    None,
    /// References required; VASPs checked when present; below the full threshold only.
    Minimal,
    /// References and both VASPs required.
    Full,
}

impl Tier {
    /// The wire spelling: `none`, `minimal`, `full`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::None => "none",
            Tier::Minimal => "minimal",
            Tier::Full => "full",
        }
    }

    /// Parses the wire spelling (exact, lower case).
    pub fn parse(s: &str) -> Option<Tier> {
        match s {
            "none" => Some(Tier::None),
            "minimal" => Some(Tier::Minimal),
            "full" => Some(Tier::Full),
            _ => None,
        }
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The level's tier under `params`; `none` when the params do not map it, and always `none`
/// for LEVEL_BLACKLISTED and LEVEL_UNSPECIFIED.
pub fn tier_for(params: &Params, level: Level) -> Tier {
    if matches!(level, Level::Blacklisted | Level::Unspecified) {
        return Tier::None;
    }
    params.level_definitions.iter().find(|d| d.level == level as i32).and_then(|d| Tier::parse(&d.travel_rule_tier)).unwrap_or(Tier::None)
}

/// The levels a registrar may assign: every level but UNSPECIFIED and BLACKLISTED.
pub fn is_assignable(level: Level) -> bool {
    !matches!(level, Level::Unspecified | Level::Blacklisted)
}

/// The default params: LEVEL_RETAIL_BASIC minimal, every higher level full, no registrars.
pub fn default_params() -> Params {
    use crate::LevelDefinition;
    let defs = [
        (Level::RetailBasic, Tier::Minimal),
        (Level::RetailPlus, Tier::Full),
        (Level::Professional, Tier::Full),
        (Level::Institutional, Tier::Full),
        (Level::LicensedIssuer, Tier::Full),
    ];
    Params {
        level_definitions: defs.iter().map(|(l, t)| LevelDefinition { level: *l as i32, travel_rule_tier: t.as_str().to_string() }).collect(),
        registrars: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_map_as_the_spec_says() {
        let p = default_params();
        assert_eq!(tier_for(&p, Level::RetailBasic), Tier::Minimal);
        for l in [Level::RetailPlus, Level::Professional, Level::Institutional, Level::LicensedIssuer] {
            assert_eq!(tier_for(&p, l), Tier::Full);
        }
        assert_eq!(tier_for(&p, Level::Blacklisted), Tier::None);
        assert_eq!(tier_for(&p, Level::Unspecified), Tier::None);
    }
}
