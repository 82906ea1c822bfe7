//! Recognising an image's format and size from its first bytes.

/// The MIME type and, when the header says, the pixel size.
pub(crate) fn sniff(b: &[u8]) -> Option<(&'static str, Option<(u32, u32)>)> {
    let be32 = |i: usize| {
        b.get(i..i + 4)
            .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    };
    let le16 = |i: usize| {
        b.get(i..i + 2)
            .map(|s| u32::from(u16::from_le_bytes([s[0], s[1]])))
    };
    // Claude Code's magic: four bytes for PNG, at least four for JPEG (recorded: explore seed
    // 11's triage).
    if b.starts_with(b"\x89PNG") {
        return Some(("image/png", be32(16).zip(be32(20))));
    }
    if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        return Some(("image/gif", le16(6).zip(le16(8))));
    }
    if b.starts_with(&[0xFF, 0xD8, 0xFF]) && b.len() >= 4 {
        return Some(("image/jpeg", jpeg_size(b)));
    }
    if b.len() >= 12 && &b[0..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        return Some(("image/webp", webp_size(b)));
    }
    None
}

fn jpeg_size(b: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    while i + 9 < b.len() {
        if b[i] != 0xFF {
            i += 1;
            continue;
        }
        let marker = b[i + 1];
        let len = usize::from(u16::from_be_bytes([b[i + 2], b[i + 3]]));
        if matches!(marker, 0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF) {
            let h = u32::from(u16::from_be_bytes([b[i + 5], b[i + 6]]));
            let w = u32::from(u16::from_be_bytes([b[i + 7], b[i + 8]]));
            return Some((w, h));
        }
        i += 2 + len;
    }
    None
}

fn webp_size(b: &[u8]) -> Option<(u32, u32)> {
    let chunk = b.get(12..16)?;
    let u24 = |i: usize| {
        b.get(i..i + 3)
            .map(|s| u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
    };
    match chunk {
        b"VP8X" => Some((u24(24)? + 1, u24(27)? + 1)),
        b"VP8 " => {
            let w = u32::from(u16::from_le_bytes([*b.get(26)?, *b.get(27)?])) & 0x3FFF;
            let h = u32::from(u16::from_le_bytes([*b.get(28)?, *b.get(29)?])) & 0x3FFF;
            Some((w, h))
        }
        b"VP8L" => {
            let bits = u32::from_le_bytes([*b.get(21)?, *b.get(22)?, *b.get(23)?, *b.get(24)?]);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    #[test]
    fn sniffs_png_and_gif_sizes() {
        let png = base64::engine::general_purpose::STANDARD
            .decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
            .unwrap();
        assert_eq!(sniff(&png), Some(("image/png", Some((1, 1)))));
        let gif = b"GIF89a\x03\x00\x02\x00rest";
        assert_eq!(sniff(gif), Some(("image/gif", Some((3, 2)))));
        assert_eq!(sniff(b"not an image"), None);
    }
}
