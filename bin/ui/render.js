// Rendering what servers send: tool results (text, images, audio, structured content, resource
// links, embedded resources; isError as an error), resource contents and prompt messages.
// Everything a server sends is untrusted: text goes in with textContent, an image or audio is
// shown only as a data: URL of a media type it claims and base64 that parses, a link only when
// it is http(s), and anything of an unknown shape is shown as JSON text.
import { h } from "./schema-form.js"

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v)
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/

/** Pretty JSON of any value (never throws). */
export function json(value) {
  try {
    return JSON.stringify(value, null, 2) ?? String(value)
  } catch {
    return String(value)
  }
}

/** A size in words: 3 B, 1.2 kB, 4.0 MB. */
export const size = (bytes) => (bytes < 1000 ? `${bytes} B` : bytes < 1e6 ? `${(bytes / 1000).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`)

/** Bytes of base64 text (approximately, from its length). */
const base64Bytes = (data) => Math.floor((data.replace(/[\s=]/g, "").length * 3) / 4)

/** An http(s) URL as a link opening elsewhere, else the text alone. */
export function link(url, text = url) {
  let ok = false
  try {
    ok = ["http:", "https:"].includes(new URL(url).protocol)
  } catch {}
  return ok ? h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, text) : h("span", { class: "mono" }, text)
}

/** An image or audio part as media, when its type and data are what they claim to be. */
function media(kind, mimeType, data) {
  const typeOk = typeof mimeType === "string" && new RegExp(`^${kind}/[\\w.+-]+$`).test(mimeType)
  const dataOk = typeof data === "string" && BASE64.test(data)
  if (!typeOk || !dataOk) {
    return h("div", { class: "part note" }, `[${kind} that cannot be shown: ${!typeOk ? `media type ${json(mimeType)}` : "its data is not base64"}]`)
  }
  const src = `data:${mimeType};base64,${data.replace(/\s/g, "")}`
  const caption = h("div", { class: "caption" }, `${mimeType}, ${size(base64Bytes(data))}`)
  if (kind === "image") return h("figure", { class: "part image" }, h("img", { src, alt: `image from the server (${mimeType})` }), caption)
  return h("figure", { class: "part audio" }, h("audio", { src, controls: true }), caption)
}

/** An embedded resource's contents (also each part of a resources/read result). */
export function resourceContents(resource) {
  if (!isObject(resource)) return h("pre", { class: "part json" }, json(resource))
  const uri = typeof resource.uri === "string" ? resource.uri : ""
  const head = h("div", { class: "resource-head" }, h("span", { class: "mono" }, uri), typeof resource.mimeType === "string" ? h("span", { class: "tag" }, resource.mimeType) : null)
  let body
  if (typeof resource.text === "string") body = h("pre", { class: "text" }, resource.text)
  else if (typeof resource.blob === "string") {
    const mime = typeof resource.mimeType === "string" ? resource.mimeType : ""
    body = /^image\//.test(mime) ? media("image", mime, resource.blob) : /^audio\//.test(mime) ? media("audio", mime, resource.blob) : h("div", { class: "note" }, `[blob ${mime || "application/octet-stream"}, ${size(base64Bytes(resource.blob))}]`)
  } else body = h("pre", { class: "json" }, json(resource))
  return h("div", { class: "part resource" }, head, body)
}

/** One content part of a tool result or prompt message. */
export function contentPart(part, ctx = {}) {
  if (!isObject(part)) return h("pre", { class: "part json" }, json(part))
  switch (part.type) {
    case "text":
      return h("pre", { class: "part text" }, typeof part.text === "string" ? part.text : json(part.text))
    case "image":
      return media("image", part.mimeType, part.data)
    case "audio":
      return media("audio", part.mimeType, part.data)
    case "resource":
      return resourceContents(part.resource)
    case "resource_link": {
      const uri = typeof part.uri === "string" ? part.uri : ""
      const name = typeof part.title === "string" ? part.title : typeof part.name === "string" ? part.name : uri
      const read = ctx.onRead && uri ? h("button", { type: "button", class: "small", onclick: () => ctx.onRead(uri) }, "Read") : null
      return h(
        "div",
        { class: "part link" },
        h("span", { class: "tag" }, "resource link"),
        " ",
        h("strong", {}, name),
        " ",
        /^https?:/i.test(uri) ? link(uri) : h("span", { class: "mono" }, uri),
        typeof part.mimeType === "string" ? h("span", { class: "tag" }, part.mimeType) : null,
        typeof part.description === "string" ? h("div", { class: "description" }, part.description) : null,
        read,
      )
    }
    default:
      return h("pre", { class: "part json" }, json(part))
  }
}

/** A tool call's result: its parts, structured content and _meta; isError shown as an error. */
export function toolResult(result, ctx = {}) {
  const box = h("div", { class: `result ${result.isError ? "error" : "ok"}`, "data-testid": "result" })
  const title = result.cancelled ? `Cancelled (${result.cancelled})` : result.isError ? "Error" : "Result"
  box.append(h("div", { class: "result-head" }, h("strong", {}, title), typeof result.ms === "number" ? h("span", { class: "dim" }, ` ${result.ms} ms`) : null))
  const parts = Array.isArray(result.content) ? result.content : null
  if (parts && parts.length > 0) for (const part of parts) box.append(contentPart(part, ctx))
  else box.append(h("pre", { class: "part text" }, typeof result.output === "string" ? result.output : ""))
  if (result.structuredContent !== undefined) {
    box.append(h("div", { class: "section-title" }, "Structured content"), h("pre", { class: "json structured" }, json(result.structuredContent)))
  }
  if (result._meta !== undefined) box.append(h("details", {}, h("summary", {}, "_meta"), h("pre", { class: "json" }, json(result._meta))))
  return box
}

/** A resources/read result. */
export function readResult(result) {
  const box = h("div", { class: "result ok", "data-testid": "result" })
  const contents = isObject(result) && Array.isArray(result.contents) ? result.contents : []
  box.append(h("div", { class: "result-head" }, h("strong", {}, `${contents.length} part${contents.length === 1 ? "" : "s"}`)))
  for (const part of contents) box.append(resourceContents(part))
  return box
}

/** A prompts/get result: its description, then each message with its role. */
export function promptResult(result, ctx = {}) {
  const box = h("div", { class: "result ok", "data-testid": "result" })
  if (isObject(result) && typeof result.description === "string") box.append(h("p", { class: "description" }, result.description))
  const messages = isObject(result) && Array.isArray(result.messages) ? result.messages : []
  for (const message of messages) {
    const role = isObject(message) && typeof message.role === "string" ? message.role : "?"
    box.append(h("div", { class: `message ${role === "assistant" ? "assistant" : "user"}` }, h("div", { class: "role" }, role), contentPart(isObject(message) ? message.content : message, ctx)))
  }
  if (messages.length === 0) box.append(h("p", { class: "dim" }, "No messages."))
  return box
}

/** An error message box. */
export function errorBox(message) {
  return h("div", { class: "result error", "data-testid": "result" }, h("div", { class: "result-head" }, h("strong", {}, "Error")), h("pre", { class: "part text" }, message))
}
