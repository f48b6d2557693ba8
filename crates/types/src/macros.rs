//! The ways a state enum is spelled here: `string_enum!` (serde as its texts,
//! `ALL`, `as_str` / `parse` / `Display` and, for the OpenAPI document, a
//! schema listing the names), `text_enum!` (serde names, `as_str` /
//! `parse`) and `plain_enum!` (serde names, `as_str` / `parse`, no schema). An
//! unknown text is no variant: `parse` answers `None`, serde an error.

/// Serde of an enum as its text (`as_str` / `parse`), written by hand: the
/// derive's visitor (variant names, indexes, bytes, maps) is several times
/// the code, once per enum, in every wasm module that reads one. The same
/// JSON both ways, and the derive's error for an unknown text.
macro_rules! serde_as_text {
    ($name:ident, [$($text:literal),+]) => {
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                Self::parse(&text)
                    .ok_or_else(|| serde::de::Error::unknown_variant(&text, &[$($text),+]))
            }
        }
    };
}

/// An enum whose variants are written as the given texts on the wire and in
/// the database.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        $crate::macros::serde_as_text!($name, [$($text),+]);

        // By hand: the derive does not see `serde(rename = $text)` through
        // the macro, and would document the variant names instead.
        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some([$($text),+]))
                    .into()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($name))
            }
        }

        impl $name {
            /// Every variant, in the order declared.
            pub const ALL: &[Self] = &[$(Self::$variant),+];
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some(Self::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// `as_str` / `parse` of an enum whose serde names are written by its own
/// derive (the texts must be the same).
macro_rules! text_enum {
    ($ty:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($text => Some(Self::$variant),)+ _ => None }
            }
        }
    };
}

/// An enum with `as_str` / `parse` and the same texts as serde names, without
/// an OpenAPI schema (not part of the REST document).
macro_rules! plain_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }
        $crate::macros::serde_as_text!($name, [$($text),+]);
        impl $name {
            pub fn as_str(self) -> &'static str { match self { $(Self::$variant => $text),+ } }
            pub fn parse(s: &str) -> Option<Self> { match s { $($text => Some(Self::$variant),)+ _ => None } }
        }
    };
}

/// Test: `$ty`'s variants (`ALL`) are written as these texts, in this
/// order, by `as_str` and by serde, and read back as themselves; an unknown
/// text is none of them.
#[cfg(test)]
macro_rules! round_trip {
    ($ty:ident, [$($text:literal),+ $(,)?]) => {{
        let texts: Vec<&str> = $ty::ALL.iter().map(|v| v.as_str()).collect();
        assert_eq!(texts, [$($text),+]);
        for v in $ty::ALL.iter().copied() {
            assert_eq!($ty::parse(v.as_str()), Some(v));
            assert_eq!(
                serde_json::to_value(v).ok(),
                Some(serde_json::Value::from(v.as_str()))
            );
            let back: Option<$ty> = serde_json::from_value(v.as_str().into()).ok();
            assert_eq!(back, Some(v));
        }
        assert_eq!($ty::parse("nope"), None);
        assert!(serde_json::from_str::<$ty>("\"nope\"").is_err());
    }};
}

#[cfg(test)]
pub(crate) use round_trip;
pub(crate) use {plain_enum, serde_as_text, string_enum, text_enum};
