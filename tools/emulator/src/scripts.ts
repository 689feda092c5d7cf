// Scripted turns: a test decides what a model answers next, whatever wire format the request
// arrives in. A coding agent's loop (call a tool, read its result, answer) needs an answer that
// names one of the agent's own tools with arguments the test chooses, which the deterministic
// rules (a "weather" call with {"location": "Paris"}) cannot give.
//
// `emulator.script(model, turns)` queues turns for the upstream model name (control suffixes
// stripped, as routes see it); each chat request for that model takes the next one, in order,
// and renders it in its own format (OpenAI chat completions, OpenAI Responses — a
// `function_call` item or a message —, Anthropic Messages, Gemini generateContent, streamed or not). Once the queue is empty the model answers by the
// deterministic rules again. Limits (`max_tokens`, stop sequences) still cut a scripted text.

/** One answer: a text, or one call of a tool the request declares, with these arguments. */
export type ScriptedTurn = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

export class TurnScripts {
  private readonly queues = new Map<string, ScriptedTurn[]>();

  add(model: string, turns: readonly ScriptedTurn[]): void {
    const queue = this.queues.get(model) ?? [];
    queue.push(...turns.map((turn) => structuredClone(turn)));
    this.queues.set(model, queue);
  }

  /** The next turn scripted for this model, removed from its queue; undefined when none is left. */
  take(model: string): ScriptedTurn | undefined {
    const queue = this.queues.get(model);
    const turn = queue?.shift();
    if (queue !== undefined && queue.length === 0) this.queues.delete(model);
    return turn;
  }

  /** Turns scripted for this model and not answered yet. */
  pending(model: string): number {
    return this.queues.get(model)?.length ?? 0;
  }
}
