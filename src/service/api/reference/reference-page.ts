/**
 * A readable reference of the OpenAPI document as one self-contained HTML page: no script, no stylesheet or font
 * from anywhere else, so it works where lake serve has no internet access.
 */
type Json = Record<string, unknown>;

const escape = (text: unknown): string => String(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const refName = (value: unknown): string | undefined => {
  const target = (value as { $ref?: string } | undefined)?.$ref;
  return target?.split('/').pop();
};

/** A schema in one line where it is a reference, else its JSON. */
function schemaHtml(schema: unknown): string {
  const name = refName(schema);
  if (name) return `<a href="#schema-${escape(name)}">${escape(name)}</a>`;
  const text = JSON.stringify(schema, null, 2).replace(/"\$ref": "#\/components\/schemas\/([\w.-]+)"/g, '"$ref": "$1"');
  return `<pre>${escape(text)}</pre>`;
}

function operationHtml(path: string, method: string, op: Json): string {
  const parameters = (op.parameters as Json[] | undefined) ?? [];
  const security =
    (op.security as Json[])
      .map((s) =>
        Object.entries(s)
          .map(
            ([scheme, scopes]) =>
              `${scheme}${(scopes as string[]).length ? ` (${(scopes as string[]).join(' or ')})` : ''}`,
          )
          .join(' + '),
      )
      .join(' or ') || 'none';
  const body = (op.requestBody as { content: Record<string, { schema: unknown }> } | undefined)?.content[
    'application/json'
  ]?.schema;
  const responses = Object.entries(op.responses as Record<string, Json>).map(([status, response]) => {
    const content = response.content as Record<string, { schema: unknown }> | undefined;
    const [type, media] = Object.entries(content ?? {})[0] ?? [];
    return `<tr><td>${escape(status)}</td><td>${escape(response.description)}</td><td>${type ? `${escape(type)}${media ? `: ${schemaHtml(media.schema)}` : ''}` : ''}</td></tr>`;
  });
  return `<section id="${escape(op.operationId)}"><h3><span class="method">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h3>
<p>${escape(op.summary)}${op.description ? `. ${escape(op.description)}` : ''}</p>
<p><b>Authentication:</b> ${escape(security)}</p>
${parameters.length ? `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Schema</th><th>About</th></tr>${parameters.map((p) => `<tr><td><code>${escape(p.name)}</code></td><td>${escape(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td>${schemaHtml(p.schema)}</td><td>${escape(p.description ?? '')}</td></tr>`).join('')}</table>` : ''}
${body ? `<p><b>Body</b> (application/json):</p>${schemaHtml(body)}` : ''}
<table><tr><th>Status</th><th>Meaning</th><th>Body</th></tr>${responses.join('')}</table></section>`;
}

export function referencePage(document: Json): string {
  const info = document.info as Json;
  const paths = document.paths as Record<string, Record<string, Json>>;
  const byTag = new Map<string, string[]>();
  const index = new Map<string, string[]>();
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = (op.tags as string[])[0] ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), operationHtml(path, method, op)]);
      index.set(tag, [
        ...(index.get(tag) ?? []),
        `<li><a href="#${escape(op.operationId)}">${escape(method.toUpperCase())} ${escape(path)}</a></li>`,
      ]);
    }
  }
  const schemas = Object.entries((document.components as { schemas: Json }).schemas);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(info.title)} ${escape(info.version)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}code,pre{font:13px ui-monospace,monospace}pre{background:#f5f5f5;padding:.5rem;overflow:auto;max-height:24rem}table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}.method{background:#234;color:#fff;padding:0 .4rem;border-radius:3px}section{border-top:1px solid #eee;margin-top:1.5rem}</style>
</head><body>
<h1>${escape(info.title)} <small>${escape(info.version)}</small></h1>
<p>${escape(info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
<nav>${[...index].map(([tag, items]) => `<h4>${escape(tag)}</h4><ul>${items.join('')}</ul>`).join('')}</nav>
${[...byTag].map(([tag, ops]) => `<h2>${escape(tag)}</h2>${ops.join('')}`).join('')}
<h2>Schemas</h2>
${schemas.map(([name, schema]) => `<section id="schema-${escape(name)}"><h3>${escape(name)}</h3>${schemaHtml({ ...(schema as Json) })}</section>`).join('')}
</body></html>`;
}
