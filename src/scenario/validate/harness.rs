//! What the scenario asks of the tools that test it: `snapshot_variants` (the variants the
//! snapshot tests run, each a built-in or one of the file's `[variants]`), `[[expect]]` (what
//! a run's report must show; its variant, if named, must exist too) and the test-only `mutant`
//! (`cgsim fuzz --mutant`).

use super::BUILT_IN_VARIANTS;
use crate::scenario::expect::Expectation;
use crate::scenario::file::{ExpectFile, VariantFile};
use crate::scenario::members::Invalid;
use crate::scenario::{Mutant, DEFAULT_SNAPSHOT_VARIANTS};
use std::collections::BTreeMap;
use toml::Spanned;

/// The variants the snapshot tests run: `DEFAULT_SNAPSHOT_VARIANTS` when the file names none.
/// An unknown one is refused at the list.
pub(super) fn snapshot_variants(
    list: Option<&Spanned<Vec<String>>>,
    variants: &BTreeMap<String, Spanned<VariantFile>>,
) -> Result<Vec<String>, Invalid> {
    let Some(list) = list else {
        return Ok(DEFAULT_SNAPSHOT_VARIANTS.map(String::from).to_vec());
    };
    for v in list.get_ref() {
        if !BUILT_IN_VARIANTS.contains(&v.as_str()) && !variants.contains_key(v) {
            return Err((
                Some(list.span()),
                format!("snapshot_variants: unknown variant {v:?}"),
            ));
        }
    }
    Ok(list.get_ref().clone())
}

/// The `[[expect]]` entries in file order. Each one's `line` is its span's start for now:
/// `validate`, which has the text, makes it a line. An error names the entry.
pub(super) fn expectations(
    entries: &[Spanned<ExpectFile>],
    variants: &BTreeMap<String, Spanned<VariantFile>>,
) -> Result<Vec<Expectation>, Invalid> {
    let mut expects = Vec::new();
    for entry in entries {
        let known = |v: &str| BUILT_IN_VARIANTS.contains(&v) || variants.contains_key(v);
        let e = Expectation::from_file(entry.get_ref(), entry.span().start, known)
            .map_err(|m| (Some(entry.span()), format!("[[expect]]: {m}")))?;
        expects.push(e);
    }
    Ok(expects)
}

/// The deliberately broken behaviour the file asks for, if any, refused at its key when no
/// mutant has that name.
pub(super) fn mutant(name: Option<&Spanned<String>>) -> Result<Option<Mutant>, Invalid> {
    match name {
        None => Ok(None),
        Some(name) => Mutant::parse(name.get_ref())
            .map(Some)
            .map_err(|m| (Some(name.span()), format!("mutant: {m}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::expect::Comparison;
    use serde::Deserialize;

    /// The keys this file reads, as a scenario file writes them.
    #[derive(Deserialize)]
    struct Doc {
        snapshot_variants: Option<Spanned<Vec<String>>>,
        #[serde(default)]
        variants: BTreeMap<String, Spanned<VariantFile>>,
        #[serde(default)]
        expect: Vec<Spanned<ExpectFile>>,
        mutant: Option<Spanned<String>>,
    }

    fn doc(text: &str) -> Doc {
        toml::from_str(text).expect("a valid snippet")
    }

    const STICKY: &str = "[variants.sticky]\nassignors = [\"cooperative-sticky\"]\n";

    #[test]
    fn snapshot_variants_default_to_the_built_ins_and_name_known_ones() {
        let d = doc(STICKY);
        assert_eq!(
            snapshot_variants(None, &d.variants).unwrap(),
            ["eager", "cooperative", "consumer"]
        );
        let d = doc(&format!(
            "snapshot_variants = [\"sticky\", \"default\"]\n{STICKY}"
        ));
        assert_eq!(
            snapshot_variants(d.snapshot_variants.as_ref(), &d.variants).unwrap(),
            ["sticky", "default"]
        );
    }

    #[test]
    fn an_unknown_snapshot_variant_is_refused_at_the_list() {
        let text = "snapshot_variants = [\"eager\", \"stiky\"]\n";
        let d = doc(text);
        let e = snapshot_variants(d.snapshot_variants.as_ref(), &d.variants).unwrap_err();
        assert_eq!(e.1, "snapshot_variants: unknown variant \"stiky\"");
        assert_eq!(&text[e.0.unwrap()], "[\"eager\", \"stiky\"]");
    }

    #[test]
    fn expectations_keep_their_order_and_name_known_variants() {
        let text = format!(
            "{STICKY}\n\
             [[expect]]\nkey = \"pauses.count\"\nle = 3\nvariant = \"sticky\"\n\n\
             [[expect]]\nkey = \"lag.max\"\neq = 0\n"
        );
        let d = doc(&text);
        let e = expectations(&d.expect, &d.variants).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(
            (&e[0].key, &e[0].comparison, e[0].variant.as_deref()),
            (
                &"pauses.count".to_string(),
                &Comparison::Le(3.0),
                Some("sticky")
            )
        );
        // The span's start until `validate` makes it a line.
        assert_eq!(e[1].line, d.expect[1].span().start);
    }

    #[test]
    fn an_expectation_with_an_unknown_variant_is_refused_at_its_entry() {
        let text = "[[expect]]\nkey = \"lag.max\"\neq = 0\nvariant = \"sticky\"\n";
        let d = doc(text);
        assert_eq!(
            expectations(&d.expect, &d.variants).unwrap_err(),
            (
                Some(d.expect[0].span()),
                "[[expect]]: unknown variant \"sticky\"".into()
            )
        );
    }

    #[test]
    fn a_mutant_is_one_cgsim_knows() {
        assert_eq!(mutant(None).unwrap(), None);
        let d = doc("mutant = \"early-assign\"\n");
        assert_eq!(
            mutant(d.mutant.as_ref()).unwrap(),
            Some(Mutant::EarlyAssign)
        );
        let text = "mutant = \"late-assign\"\n";
        let e = mutant(doc(text).mutant.as_ref()).unwrap_err();
        assert_eq!(&text[e.0.unwrap()], "\"late-assign\"");
        assert!(
            e.1.starts_with("mutant: unknown mutant \"late-assign\" (one of: "),
            "{}",
            e.1
        );
    }
}
