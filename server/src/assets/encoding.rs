//! Picking the precompressed copy a request accepts (`Accept-Encoding`).

use axum::http::{HeaderMap, header};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Brotli,
    Gzip,
    Identity,
}

impl Encoding {
    /// The `Content-Encoding` value (none for identity).
    pub fn token(self) -> Option<&'static str> {
        match self {
            Encoding::Brotli => Some("br"),
            Encoding::Gzip => Some("gzip"),
            Encoding::Identity => None,
        }
    }

    /// Distinguishes the ETag of each representation.
    pub fn etag_suffix(self) -> &'static str {
        match self {
            Encoding::Brotli => "-br",
            Encoding::Gzip => "-gz",
            Encoding::Identity => "",
        }
    }
}

/// Brotli if accepted and available, else gzip, else the raw bytes.
/// `q=0` refuses a coding; `*` accepts any coding not named.
pub fn choose(headers: &HeaderMap, have_br: bool, have_gz: bool) -> Encoding {
    let mut br = None;
    let mut gzip = None;
    let mut any = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next()
                .unwrap_or(1.0);
            let accepted = q > 0.0;
            match coding.as_str() {
                "br" => br = Some(accepted),
                "gzip" | "x-gzip" => gzip = Some(accepted),
                "*" => any = Some(accepted),
                _ => {}
            }
        }
    }
    let any = any.unwrap_or(false);
    if have_br && br.unwrap_or(any) {
        Encoding::Brotli
    } else if have_gz && gzip.unwrap_or(any) {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn pick(accept: Option<&str>) -> Encoding {
        let mut headers = HeaderMap::new();
        if let Some(a) = accept {
            headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(a).unwrap());
        }
        choose(&headers, true, true)
    }

    #[test]
    fn prefers_brotli_then_gzip() {
        assert_eq!(pick(Some("gzip, deflate, br, zstd")), Encoding::Brotli);
        assert_eq!(pick(Some("gzip, deflate")), Encoding::Gzip);
        assert_eq!(pick(Some("br;q=0, gzip")), Encoding::Gzip);
        assert_eq!(pick(Some("identity")), Encoding::Identity);
        assert_eq!(pick(None), Encoding::Identity);
        assert_eq!(pick(Some("*")), Encoding::Brotli);
        assert_eq!(pick(Some("*, br;q=0")), Encoding::Gzip);
        assert_eq!(pick(Some("BR;q=0.5")), Encoding::Brotli);
        assert_eq!(pick(Some("gzip;q=0, br;q=0")), Encoding::Identity);
    }

    #[test]
    fn falls_back_when_a_copy_is_missing() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("br, gzip"),
        );
        assert_eq!(choose(&headers, false, true), Encoding::Gzip);
        assert_eq!(choose(&headers, false, false), Encoding::Identity);
    }
}
