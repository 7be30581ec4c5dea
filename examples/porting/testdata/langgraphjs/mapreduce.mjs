import { Annotation, END, Send, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  topic: Annotation(),
  subjects: Annotation(),
  jokes: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  best: Annotation(),
});

const topics = async (s) => ({
  subjects: ["lions", "elephants", "penguins"].map((a) => `${s.topic} ${a}`),
});
const joke = async (s) => ({
  jokes: [`Why did the ${s.subject} cross the road?`],
});
const toJokes = (s) =>
  s.subjects.map((subject) => new Send("joke", { subject }));
const pick = async (s) => ({
  best: s.jokes.reduce((a, b) => (b.length > a.length ? b : a)),
});

const graph = new StateGraph(State)
  .addNode("topics", topics)
  .addNode("joke", joke)
  .addNode("pick", pick)
  .addEdge(START, "topics")
  .addConditionalEdges("topics", toJokes, ["joke"])
  .addEdge("joke", "pick")
  .addEdge("pick", END)
  .compile();

const res = await graph.invoke({ topic: "funny" });
for (const j of res.jokes) console.log(j);
console.log("best:", res.best);
