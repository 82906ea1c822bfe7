//! Rendering a Jupyter notebook for the model: each cell in `<cell id="..">` tags, outputs as
//! text or images, adjacent text merged.

use serde_json::Value;
use tool_core::ContentBlock;

/// Text of a notebook field that may be a string or a list of strings.
fn joined(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

fn notebook_language(nb: &Value) -> String {
    nb.pointer("/metadata/language_info/name")
        .or_else(|| nb.pointer("/metadata/kernelspec/language"))
        .and_then(Value::as_str)
        .unwrap_or("python")
        .to_owned()
}

/// The cells as Claude Code gives them to a PostToolUse hook (`tool_response.file.cells`):
/// sources joined, ids as `cell_id`, code cells with their language and outputs as text
/// (recorded: hp_read_media).
pub(crate) fn cells_payload(nb: &Value) -> Value {
    let language = notebook_language(nb);
    let cells = nb
        .get("cells")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let out: Vec<Value> = cells
        .iter()
        .enumerate()
        .map(|(index, cell)| {
            let mut c = serde_json::Map::new();
            let cell_type = cell
                .get("cell_type")
                .and_then(Value::as_str)
                .unwrap_or("code");
            c.insert("cellType".into(), Value::from(cell_type));
            c.insert("source".into(), Value::from(joined(cell.get("source"))));
            if cell_type == "code"
                && let Some(n) = cell.get("execution_count")
            {
                c.insert("execution_count".into(), n.clone());
            }
            let id = cell
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("cell-{index}"), str::to_owned);
            c.insert("cell_id".into(), Value::from(id));
            if cell_type == "code" {
                c.insert("language".into(), Value::from(language.as_str()));
                let outputs: Vec<Value> = cell
                    .get("outputs")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(output_payload)
                    .collect();
                if !outputs.is_empty() {
                    c.insert("outputs".into(), Value::Array(outputs));
                }
            }
            Value::Object(c)
        })
        .collect();
    Value::Array(out)
}

fn output_payload(output: &Value) -> Value {
    let kind = output
        .get("output_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    let text = match kind {
        "stream" => joined(output.get("text")),
        "execute_result" | "display_data" => {
            joined(output.get("data").and_then(|d| d.get("text/plain")))
        }
        "error" => error_text(output),
        _ => String::new(),
    };
    serde_json::json!({"output_type": kind, "text": text})
}

/// An error output as text: `name: value` and the traceback's lines.
fn error_text(output: &Value) -> String {
    let ename = output
        .get("ename")
        .and_then(Value::as_str)
        .unwrap_or("Error");
    let evalue = output.get("evalue").and_then(Value::as_str).unwrap_or("");
    let tb: Vec<&str> = output
        .get("traceback")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    format!("{ename}: {evalue}\n{}", tb.join("\n"))
}

/// The blocks the model sees for a notebook.
pub(crate) fn render(nb: &Value) -> Vec<ContentBlock> {
    let language = notebook_language(nb);
    let mut blocks: Vec<ContentBlock> = Vec::new();
    let cells = nb
        .get("cells")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (index, cell) in cells.iter().enumerate() {
        let id = cell
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("cell-{index}"));
        let cell_type = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("code");
        let mut text = format!("<cell id=\"{id}\">");
        if cell_type != "code" {
            text.push_str(&format!("<cell_type>{cell_type}</cell_type>"));
        }
        if cell_type == "code" && language != "python" {
            text.push_str(&format!("<language>{language}</language>"));
        }
        text.push_str(&joined(cell.get("source")));
        text.push_str(&format!("</cell id=\"{id}\">"));
        blocks.push(ContentBlock::text(text));
        if cell_type == "code" {
            for output in cell
                .get("outputs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                blocks.extend(render_output(output));
            }
        }
    }
    merge_text(blocks)
}

fn render_output(output: &Value) -> Vec<ContentBlock> {
    let kind = output
        .get("output_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut out = Vec::new();
    match kind {
        "stream" => out.push(ContentBlock::text(format!(
            "\n{}",
            joined(output.get("text"))
        ))),
        "execute_result" | "display_data" => {
            let data = output.get("data");
            let text = joined(data.and_then(|d| d.get("text/plain")));
            if !text.is_empty() {
                out.push(ContentBlock::text(format!("\n{text}")));
            }
            for (mime, key) in [("image/png", "image/png"), ("image/jpeg", "image/jpeg")] {
                if let Some(img) = data.and_then(|d| d.get(key)) {
                    let b64: String = joined(Some(img)).split_whitespace().collect();
                    out.push(ContentBlock::image(mime, b64));
                }
            }
        }
        "error" => out.push(ContentBlock::text(format!("\n{}", error_text(output)))),
        _ => {}
    }
    out
}

fn merge_text(blocks: Vec<ContentBlock>) -> Vec<ContentBlock> {
    let mut out: Vec<ContentBlock> = Vec::new();
    for b in blocks {
        match (out.last_mut(), b) {
            (Some(ContentBlock::Text { text: prev }), ContentBlock::Text { text }) => {
                prev.push('\n');
                prev.push_str(&text);
            }
            (_, b) => out.push(b),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_cells_and_outputs_as_recorded() {
        let nb = json!({"cells": [
            {"cell_type": "markdown", "id": "m1", "source": ["# Title\n", "text"]},
            {"cell_type": "code", "id": "c1", "source": ["print(1)"], "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]}
        ], "metadata": {"language_info": {"name": "python"}}});
        assert_eq!(
            render(&nb),
            vec![ContentBlock::text(
                "<cell id=\"m1\"><cell_type>markdown</cell_type># Title\ntext</cell id=\"m1\">\n<cell id=\"c1\">print(1)</cell id=\"c1\">\n\n1\n"
            )]
        );
    }

    #[test]
    fn images_split_text_and_other_languages_are_tagged() {
        let nb = json!({"cells": [{"cell_type": "code", "source": "x", "outputs": [
            {"output_type": "display_data", "data": {"image/png": "QUJD\n", "text/plain": "<Figure>"}}]}],
            "metadata": {"language_info": {"name": "julia"}}});
        let blocks = render(&nb);
        assert_eq!(
            blocks[0],
            ContentBlock::text(
                "<cell id=\"cell-0\"><language>julia</language>x</cell id=\"cell-0\">\n\n<Figure>"
            )
        );
        assert_eq!(blocks[1], ContentBlock::image("image/png", "QUJD"));
    }
}
