/**
 * The reference host's model: any OpenAI-compatible Chat Completions
 * endpoint. The messages and tools of a request as this host uses them,
 * and `askModel`, one request within `--model-timeout`, its answer read
 * to at most `MAX_MESSAGE_BYTES` and checked.
 *
 * @module
 */

import { z } from "npm:zod@4.6.7";
import { MAX_MESSAGE_BYTES } from "./host_bounds.ts";
import type { HostOptions } from "./host_args.ts";

/** A Chat Completions message, as far as this host uses them. */
export type Message =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };
export type ToolCall = z.output<typeof toolCallSchema>;
const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** A function tool as the model is offered it. */
export type OfferedTool = ReturnType<typeof offered>;
export const offered = (
  name: string,
  description: string,
  parameters: object,
) => ({
  type: "function" as const,
  function: { name, description, parameters },
});

const answerSchema = z.object({
  choices: z.array(z.object({
    message: z.object({
      content: z.string().nullish(),
      tool_calls: z.array(toolCallSchema).nullish(),
    }),
  })).min(1),
});

/** One request to the model: its next message. */
export async function askModel(options: HostOptions, body: object) {
  const { response, text } = await postToModel(options, body);
  // `say` hides the key and cuts the line; no message here quotes a part
  // of the answer, which could end inside the key.
  if (!response.ok) {
    throw new Error(`the model answered ${response.status}: ${text}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error("the model's answer is not JSON");
  }
  const answer = answerSchema.safeParse(json);
  if (!answer.success) {
    throw new Error("the model's answer is not a Chat Completions answer");
  }
  return answer.data.choices[0].message;
}

/**
 * The model's response to one request and its text, in full within
 * `--model-timeout` (the signal ends the reading of the body too).
 */
async function postToModel(options: HostOptions, body: object) {
  const seconds = options["model-timeout"];
  const signal = AbortSignal.timeout(seconds * 1000);
  try {
    const response = await fetch(
      `${options["base-url"].replace(/\/$/, "")}/chat/completions`,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          // A local model may want no key: then no header at all.
          ...(options.apiKey && { authorization: `Bearer ${options.apiKey}` }),
        },
        body: JSON.stringify({ model: options.model, ...body }),
        signal,
      },
    );
    return { response, text: await readAnswer(response) };
  } catch (error) {
    if (!signal.aborted) throw error;
    throw new Error(
      `the model did not answer within ${seconds} s (--model-timeout)`,
    );
  }
}

/** A response's body as text, at most `MAX_MESSAGE_BYTES` of it. */
async function readAnswer(response: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    if ((size += chunk.length) > MAX_MESSAGE_BYTES) {
      throw new Error(`the model's answer is over ${MAX_MESSAGE_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return await new Blob(chunks as BlobPart[]).text();
}
