import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import { PolicyDataInputSchema } from "../src/domain/policies/policy-document";

const Doc = Type.Unknown({ ...PolicyDataInputSchema });
const Body = Type.Object({ name: Type.String(), policy_data: Type.Optional(Doc) });
const app = new Elysia().use(openapi({ path: "/docs", specPath: "/openapi.json" }))
  .onError(({ code, error }) => { console.log("ERR", code, (error as any).message?.slice(0, 300)); })
  .post("/x", ({ body }) => ({ got: body }), { body: Body });
for (const body of [{ name: "a", policy_data: { dlp: { screenshot_allowed: "no" } } }, { name: "a", policy_data: 5 }, { policy_data: 5 }]) {
  const r = await app.handle(new Request("http://localhost/x", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
  console.log(r.status, await r.text());
}
const spec = await (await app.handle(new Request("http://localhost/openapi.json"))).json();
console.log(JSON.stringify(spec.paths["/x"].post.requestBody, null, 1).slice(0, 1500));
